package progress

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
)

func target() measure.Target {
	return measure.Target{Commit: gitrev.Commit{Hash: strings.Repeat("ab", 20)}}
}

// TestLines: without a terminal, one plain line per build and run, failed
// runs with their reason, and a time-left estimate.
func TestLines(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf, false)
	tg := target()
	p.Building(0, 2, tg)
	p.Built(0, 2, tg, &build.Result{Cached: true}, nil)
	p.Built(1, 2, tg, &build.Result{Record: &store.BuildRecord{Duration: 1500 * time.Millisecond}}, nil)
	p.Built(1, 2, tg, nil, errors.New("boom"))
	ok := &store.RunRecord{RunKey: store.RunKey{Index: 1}, Status: store.RunOK, Usage: metric.Usage{Wall: 100 * time.Millisecond}}
	bad := &store.RunRecord{RunKey: store.RunKey{Index: 2}, Status: store.RunTimeout, Reason: "timed out after 1s"}
	p.Ran(1, 4, tg, ok)
	p.Ran(2, 4, tg, bad)
	out := buf.String()
	for _, want := range []string{
		"perfbot: build 1/2 abababababab (cached)",
		"perfbot: build 2/2 abababababab done in 1.5s",
		"perfbot: build 2/2 abababababab failed",
		"perfbot: run 1/4 abababababab #1 ok 0.100s, about",
		"perfbot: run 2/4 abababababab #2 timeout (timed out after 1s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestBar: on a terminal, a bar with counts; failures still printed.
func TestBar(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf, true)
	tg := target()
	p.Building(0, 1, tg)
	p.Built(0, 1, tg, &build.Result{Cached: true}, nil)
	p.Ran(1, 2, tg, &store.RunRecord{RunKey: store.RunKey{Index: 1}, Status: store.RunCrashed, Reason: "exit status 3"})
	p.Ran(2, 2, tg, &store.RunRecord{RunKey: store.RunKey{Index: 2}, Status: store.RunOK})
	out := buf.String()
	for _, want := range []string{"(1/1)", "(2/2)", "crashed: exit status 3"} {
		if !strings.Contains(out, want) {
			t.Errorf("bar output lacks %q:\n%q", want, out)
		}
	}
}
