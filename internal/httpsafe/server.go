package httpsafe

import (
	"net/http"
	"time"
)

// Timeouts bound every connection of a Server. Zero fields take the
// defaults, which fit perfbot serve: its requests are small (a write's
// body is at most 1 MiB), its pages take at most two minutes of work
// (the dashboard's per-request limit) and River's UI polls with short
// requests; nothing streams but a fleet blob, which sets its own write
// deadline by its size (ExtendWrite).
type Timeouts struct {
	// ReadHeader bounds reading a request's headers (10 s).
	ReadHeader time.Duration
	// Read bounds reading a whole request, its body included (30 s): a
	// body that stalls is cut there.
	Read time.Duration
	// Write bounds the time from the end of a request's headers to the
	// end of its answer (3 min).
	Write time.Duration
	// Idle bounds how long a keep-alive connection waits for its next
	// request (60 s).
	Idle time.Duration
}

// Default timeouts (Timeouts' fields).
const (
	DefaultReadHeader = 10 * time.Second
	DefaultRead       = 30 * time.Second
	DefaultWrite      = 3 * time.Minute
	DefaultIdle       = 60 * time.Second
)

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// NewServer is the http.Server of h with the timeouts t (defaults for
// its zero fields) and a bound on the headers' size (64 KiB).
func NewServer(h http.Handler, t Timeouts) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: orDefault(t.ReadHeader, DefaultReadHeader),
		ReadTimeout:       orDefault(t.Read, DefaultRead),
		WriteTimeout:      orDefault(t.Write, DefaultWrite),
		IdleTimeout:       orDefault(t.Idle, DefaultIdle),
		MaxHeaderBytes:    64 << 10,
	}
}

// ExtendWrite gives the answer being written through w until d from now
// to finish (a large download), instead of the server's Write timeout.
// It reports whether the connection allowed it.
func ExtendWrite(w http.ResponseWriter, d time.Duration) bool {
	return http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d)) == nil
}
