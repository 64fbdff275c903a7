package main

import (
	"context"
	"os"
	"syscall"
	"testing"
)

// TestSignalRouter: without a taker every signal ends the command; while
// watch takes them, SIGHUP asks a reload, the first SIGTERM or SIGINT a
// stop and the second ends it; after release the default is back.
func TestSignalRouter(t *testing.T) {
	var r signalRouter
	ended := func(sig os.Signal) bool {
		ctx, cancel := context.WithCancel(context.Background())
		r.route(sig, cancel)
		return ctx.Err() != nil
	}
	for _, sig := range []os.Signal{syscall.SIGHUP, syscall.SIGTERM, os.Interrupt} {
		if !ended(sig) {
			t.Errorf("%v did not end a command that does not take signals", sig)
		}
	}
	stop, reload := make(chan struct{}, 1), make(chan struct{}, 1)
	release := r.take(stop, reload)
	if ended(syscall.SIGHUP) || len(reload) != 1 || len(stop) != 0 {
		t.Errorf("SIGHUP under watch: want a reload request only")
	}
	if ended(syscall.SIGHUP) || len(reload) != 1 {
		t.Errorf("a second SIGHUP before the first was read must not block or end")
	}
	if ended(syscall.SIGTERM) || len(stop) != 1 {
		t.Errorf("first SIGTERM under watch: want a stop request, not an end")
	}
	if !ended(os.Interrupt) {
		t.Errorf("a second stop signal must end it at once")
	}
	release()
	if !ended(syscall.SIGHUP) {
		t.Errorf("after release SIGHUP must end the command again")
	}
}
