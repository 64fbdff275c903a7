// Package progress shows how a measurement is going on stderr: a progress
// bar with the time left when stderr is a terminal, plain log lines
// otherwise (CI logs, pipes).
package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// New returns a measure.Progress writing to w; a bar when tty is true.
func New(w io.Writer, tty bool) measure.Progress {
	if tty {
		return &bar{w: w}
	}
	return &lines{w: w}
}

// lines logs one line per build and per run.
type lines struct {
	w     io.Writer
	start time.Time
}

func (l *lines) Building(i, n int, t measure.Target) {}

func (l *lines) Built(i, n int, t measure.Target, r *build.Result, err error) {
	switch {
	case err != nil:
		fmt.Fprintf(l.w, "perfbot: build %d/%d %s failed\n", i+1, n, t)
	case r.Cached:
		fmt.Fprintf(l.w, "perfbot: build %d/%d %s (cached)\n", i+1, n, t)
	default:
		fmt.Fprintf(l.w, "perfbot: build %d/%d %s done in %.1fs\n", i+1, n, t, r.Record.Duration.Seconds())
	}
}

func (l *lines) Ran(done, total int, t measure.Target, r *store.RunRecord) {
	if l.start.IsZero() || done == 1 {
		l.start = time.Now().Add(-r.Usage.Wall)
	}
	status := string(r.Status)
	if r.Status != store.RunOK {
		status += " (" + r.Reason + ")"
	}
	fmt.Fprintf(l.w, "perfbot: run %d/%d %s #%d %s %.3fs%s\n", done, total, t, r.Index, status,
		r.Usage.Wall.Seconds(), eta(l.start, done, total))
}

// Note shows a note of the measurement (measure.Noter).
func (l *lines) Note(msg string) {
	fmt.Fprintf(l.w, "perfbot: note: %s\n", msg)
}

// eta estimates the time left from the pace so far.
func eta(start time.Time, done, total int) string {
	if done == 0 || done >= total {
		return ""
	}
	left := time.Duration(float64(time.Since(start)) / float64(done) * float64(total-done))
	return fmt.Sprintf(", about %s left", left.Round(time.Second))
}

// bar draws a progress bar for builds and then one for runs.
type bar struct {
	w   io.Writer
	mu  sync.Mutex
	cur *progressbar.ProgressBar
}

func (b *bar) newBar(n int, desc string) *progressbar.ProgressBar {
	return progressbar.NewOptions(n,
		progressbar.OptionSetWriter(b.w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(b.w) }),
	)
}

func (b *bar) Building(i, n int, t measure.Target) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i == 0 {
		b.cur = b.newBar(n, "building")
	}
	b.cur.Describe("building " + t.String())
}

func (b *bar) Built(i, n int, t measure.Target, r *build.Result, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		_ = b.cur.Clear()
		fmt.Fprintf(b.w, "perfbot: build of %s failed\n", t)
	}
	_ = b.cur.Add(1)
}

// Note shows a note of the measurement (measure.Noter) above the bar.
func (b *bar) Note(msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cur != nil {
		_ = b.cur.Clear()
	}
	fmt.Fprintf(b.w, "perfbot: note: %s\n", msg)
}

func (b *bar) Ran(done, total int, t measure.Target, r *store.RunRecord) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if done == 1 {
		b.cur = b.newBar(total, "running")
	}
	if r.Status != store.RunOK {
		_ = b.cur.Clear()
		fmt.Fprintf(b.w, "perfbot: run %s #%d %s: %s\n", t, r.Index, r.Status, r.Reason)
	}
	b.cur.Describe(fmt.Sprintf("running %s #%d", t, r.Index))
	_ = b.cur.Add(1)
}
