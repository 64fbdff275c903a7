package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/dashboard"
	"github.com/perfbot/perfbot/internal/watch"
)

func newServeCmd(a *app) *cobra.Command {
	var stores []string
	var addr string
	cmd := &cobra.Command{
		Use:   "serve [WATCHFILE] [--store DIR ...] [--addr 127.0.0.1:8080]",
		Short: "serve the web dashboard over the results stores",
		Long: `Serve runs the web dashboard over the stores of a watch file's jobs (and
the stores named with --store): the jobs and their latest findings, each
metric's history with its change points, culprits and the layout beside it,
each finding with its evidence drawn, and comparisons of stored runs; the
same data as JSON under /api/ (docs/dashboard.md). It reads the stores and
measures nothing, so it runs beside perfbot watch.

It listens on 127.0.0.1 unless --addr says otherwise. Changes (a finding's
state) need the token in $PERFBOT_TOKEN, sent by the pages (or a client) as
'Authorization: Bearer TOKEN'; without it the dashboard is read-only.
Actions that start work (compare, bisect, triage, a watch cycle) are shown
as the command to run.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cfg := dashboard.Config{Stores: stores, Token: os.Getenv("PERFBOT_TOKEN"), Logf: a.logf}
			if len(args) == 1 {
				w, err := watch.Load(args[0])
				if err != nil {
					return err
				}
				cfg.Watch = w
			}
			if cfg.Watch == nil && len(stores) == 0 {
				return errors.New("serve: give a watch file or --store DIR")
			}
			srv, err := dashboard.New(ctx, cfg)
			if err != nil {
				return err
			}
			defer srv.Close()
			l, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("--addr %s: %w", addr, err)
			}
			mode := "read-only (set PERFBOT_TOKEN to allow changes)"
			if cfg.Token != "" {
				mode = "changes need the token in PERFBOT_TOKEN"
			}
			a.logf("serving http://%s/ (%s)", l.Addr(), mode)
			if host, _, _ := net.SplitHostPort(l.Addr().String()); !net.ParseIP(host).IsLoopback() {
				a.logf("warning: %s is not a loopback address: whoever reaches it reads the stores", host)
			}
			hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
			// The histories are built once in the background, so that the
			// first view of a long one does not wait; the stores close
			// only after it stops.
			warm, stopWarm := context.WithCancel(ctx)
			warmed := make(chan struct{})
			go func() { srv.Warm(warm); close(warmed) }()
			defer func() { stopWarm(); <-warmed }()
			done := make(chan error, 1)
			go func() { done <- hs.Serve(l) }()
			select {
			case err := <-done:
				return err
			case <-ctx.Done():
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = hs.Shutdown(sctx)
				return nil
			}
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&stores, "store", nil, "a results store folder (.perfbot) to serve, with every job it holds (repeatable)")
	fl.StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on")
	return cmd
}
