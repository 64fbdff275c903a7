package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// signalRouter turns the process's signals into what the running command
// asked for. By default SIGINT, SIGTERM and SIGHUP end the command (its
// context is cancelled: a run in flight is killed and not stored). A
// command that stops in order (perfbot watch without --once) takes them:
// the first SIGINT or SIGTERM asks it to stop, a second ends it at once,
// and SIGHUP asks it to reload.
type signalRouter struct {
	mu     sync.Mutex
	stop   chan<- struct{}
	reload chan<- struct{}
	asked  bool // a stop was asked
}

// procSignals routes the signals of this process (main starts it).
var procSignals = &signalRouter{}

// listen routes the process's signals until it exits; cancel ends the
// command.
func (r *signalRouter) listen(cancel context.CancelFunc) {
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		for sig := range ch {
			r.route(sig, cancel)
		}
	}()
}

func (r *signalRouter) route(sig os.Signal, cancel context.CancelFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case sig == syscall.SIGHUP && r.reload != nil:
		nonBlocking(r.reload)
	case sig != syscall.SIGHUP && r.stop != nil && !r.asked:
		r.asked = true
		nonBlocking(r.stop)
	default:
		cancel()
	}
}

// take hands stop and reload requests to the caller until release.
func (r *signalRouter) take(stop, reload chan<- struct{}) (release func()) {
	r.mu.Lock()
	r.stop, r.reload, r.asked = stop, reload, false
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		r.stop, r.reload = nil, nil
		r.mu.Unlock()
	}
}

func nonBlocking(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
