package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/dashboard"
	"github.com/perfbot/perfbot/internal/fleet"
	"github.com/perfbot/perfbot/internal/httpsafe"
	"github.com/perfbot/perfbot/internal/watch"
)

func newServeCmd(a *app) *cobra.Command {
	var stores []string
	var db, class, dir, watchFile string
	var bind httpsafe.Bind
	cmd := &cobra.Command{
		Use:   "serve [WATCHFILE] [--store DIR ...] [--addr 127.0.0.1:8080]",
		Short: "serve the web dashboard over the results stores",
		Long: `Serve runs the web dashboard over the stores of a watch file's jobs (and
the stores named with --store): the jobs and their latest findings, each
metric's history with its change points, culprits and the layout beside it,
each finding with its evidence drawn, and comparisons of stored runs; the
same data as JSON under /api/ (docs/dashboard.md). It reads the stores and
measures nothing, so it runs beside perfbot watch.

It listens on 127.0.0.1 unless --addr says otherwise, and there answers
only for localhost, 127.0.0.1, [::1] and the names of --allow-host (a web
page of another site cannot read it by DNS rebinding). Changes (a finding's
state) need the token in $PERFBOT_TOKEN, sent by the pages (or a client) as
'Authorization: Bearer TOKEN'; without it the dashboard is read-only. With
$PERFBOT_READ_TOKEN every read needs a token too: a client sends it as a
bearer token, a browser logs in once at /login. An address that is not
loopback needs the read token and HTTPS (--tls-cert, --tls-key), or
--insecure.
Actions that start work (compare, bisect, triage, a watch cycle) are shown
as the command to run.

With --db it is also a fleet's server (docs/fleet.md): River's leader, the
orchestrator of comparisons and bisections, the fleet's API under /fleet/api/
and River's UI under /riverui/. The dashboard then serves the fleet's
results from that database too, and its compare and bisect actions go on
the fleet's queue, measured by the workers of --class. With --watch
WATCHFILE it also runs that watch file's cycles on the fleet (docs/watch.md):
each job measured, bisected and triaged on the machines of its class (the
watch file's class:, else --class), everything kept in the fleet's
database; of the servers given the same watch file, one schedules its
cycles at a time (the others take over when it stops).

Exit status: 0 when stopped by SIGINT or SIGTERM, 2 on error (bad flags, an
address that cannot be bound, a store or database that cannot be read).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			bind.ReadToken = os.Getenv("PERFBOT_READ_TOKEN")
			cfg := dashboard.Config{Stores: stores, Token: os.Getenv("PERFBOT_TOKEN"), ReadToken: bind.ReadToken, Logf: a.logf}
			if len(args) == 1 {
				w, err := watch.Load(args[0])
				if err != nil {
					return err
				}
				cfg.Watch = w
			}
			if cfg.Watch == nil && len(stores) == 0 && db == "" {
				return errors.New("serve: give a watch file, --store DIR or --db URL")
			}
			if watchFile != "" && db == "" {
				return errors.New("--watch: needs --db URL (a fleet's server runs the watch's cycles)")
			}
			tlsCfg, err := bind.TLS()
			if err != nil {
				return err
			}
			l, err := net.Listen("tcp", bind.Addr)
			if err != nil {
				return fmt.Errorf("--addr %s: %w", bind.Addr, err)
			}
			defer l.Close()
			warning, err := bind.Check(l.Addr(), tlsCfg != nil)
			if err != nil {
				return err
			}
			if warning != "" {
				a.logf("warning: %s", warning)
			}
			cfg.Hosts, cfg.Secure = bind.Hosts(l.Addr()), tlsCfg != nil
			if db != "" {
				stop, err := serveFleet(ctx, a, &cfg, db, class, dir, watchFile)
				if err != nil {
					return err
				}
				defer stop()
			}
			srv, err := dashboard.New(ctx, cfg)
			if err != nil {
				return err
			}
			defer srv.Close()
			mode := "read-only: set PERFBOT_TOKEN to allow changes"
			if cfg.Token != "" {
				mode = "changes need the token in PERFBOT_TOKEN"
			}
			if cfg.ReadToken != "" {
				mode += "; reads need PERFBOT_READ_TOKEN"
			}
			scheme := "http"
			if tlsCfg != nil {
				scheme = "https"
				l = tls.NewListener(l, tlsCfg)
			}
			a.logf("serving %s://%s/ (%s)", scheme, l.Addr(), mode)
			hs := httpsafe.NewServer(srv.Handler(), httpsafe.Timeouts{})
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
	fl.StringVar(&bind.Addr, "addr", "127.0.0.1:8080", "address to listen on (one that is not loopback needs PERFBOT_READ_TOKEN and --tls-cert/--tls-key, or --insecure)")
	fl.StringArrayVar(&bind.AllowHosts, "allow-host", nil, "a host name the server answers for besides localhost, 127.0.0.1, [::1] and --addr's (repeatable)")
	fl.StringVar(&bind.CertFile, "tls-cert", "", "serve HTTPS with this certificate (PEM; with --tls-key)")
	fl.StringVar(&bind.KeyFile, "tls-key", "", "the private key of --tls-cert (PEM)")
	fl.BoolVar(&bind.Insecure, "insecure", false, "allow an --addr that is not loopback without a read token or TLS")
	fl.StringVar(&db, "db", "", "also be the fleet's server over this PostgreSQL database (postgres://...)")
	fl.StringVar(&class, "class", "", "with --db: the machine class that measures the dashboard's actions (and, with --watch, the jobs whose watch file names no class:)")
	fl.StringVar(&watchFile, "watch", "", "with --db: run this watch file's cycles on the fleet (one scheduler per watch file across servers)")
	fl.StringVar(&dir, "dir", "", "with --db: the server's workspace, its clones of the jobs' repositories (default: the user's cache folder)")
	return cmd
}

// serveFleet starts the fleet's server over the database db and adds its
// results store, queue, API and River's UI to the dashboard's cfg. stop
// stops the server and closes what it opened.
func serveFleet(ctx context.Context, a *app, cfg *dashboard.Config, db, class, dir, watchFile string) (stop func(), err error) {
	if dir, err = fleet.LocalDir(dir, "server"); err != nil {
		return nil, fmt.Errorf("--dir: %w", err)
	}
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	// On an error every return below gives a nil stop: what was opened
	// closes here.
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	pool, err := fleet.Connect(ctx, db)
	if err != nil {
		return nil, err
	}
	closers = append(closers, pool.Close)
	results, err := fleet.OpenResults(ctx, db, filepath.Join(dir, "store"))
	if err != nil {
		return nil, err
	}
	closers = append(closers, func() { results.Close() })
	srv, err := fleet.NewServer(ctx, fleet.ServerConfig{Pool: pool, Results: results, Dir: dir,
		Log: func(format string, args ...any) { a.logf("fleet: "+format, args...) }})
	if err != nil {
		return nil, err
	}
	if err := srv.Start(ctx); err != nil {
		return nil, err
	}
	closers = append(closers, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Stop(sctx)
	})
	if watchFile != "" {
		if _, err := watch.Load(watchFile); err != nil {
			return nil, err
		}
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { _ = srv.Schedule(wctx, watchFile, class, 0); close(done) }()
		closers = append(closers, func() { cancel(); <-done })
	}
	ui, err := srv.RiverUI(ctx)
	if err != nil {
		return nil, err
	}
	cfg.Open = append(cfg.Open, results)
	cfg.DB = db
	if class != "" {
		cfg.Queue = dashboard.FleetQueue{Server: srv, Class: class}
	}
	cfg.Mounts = append(cfg.Mounts,
		dashboard.Mount{Prefix: "/fleet", Handler: http.StripPrefix("/fleet", srv.Handler())},
		dashboard.Mount{Prefix: fleet.RiverUIPrefix, Handler: ui})
	a.logf("fleet server over %s: API under /fleet/api/, River's UI under %s/", fleet.Redact(db), fleet.RiverUIPrefix)
	return closeAll, nil
}
