package fleet

import (
	"context"
	"log/slog"
	"net/http"
	"os"

	"riverqueue.com/riverui"
)

// RiverUIPrefix is where the server mounts River's web UI.
const RiverUIPrefix = "/riverui"

// RiverUI returns River's web UI (riverqueue.com/riverui) over the
// fleet's queue, to be mounted at RiverUIPrefix beside Handler: every
// build, round, comparison and bisection job, its state, attempts and
// errors. It serves until ctx ends.
func (s *Server) RiverUI(ctx context.Context) (http.Handler, error) {
	h, err := riverui.NewHandler(&riverui.HandlerOpts{
		Endpoints: riverui.NewEndpoints(s.River, nil),
		Logger:    slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Prefix:    RiverUIPrefix,
	})
	if err != nil {
		return nil, err
	}
	if err := h.Start(ctx); err != nil {
		return nil, err
	}
	return h, nil
}
