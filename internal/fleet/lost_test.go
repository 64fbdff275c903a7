package fleet_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/perfbot/perfbot/internal/fleet"
)

// proxy forwards TCP connections on a loopback port to target until cut:
// a network between a worker and its database that can fail.
type proxy struct {
	t      *testing.T
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	p := &proxy{t: t, target: target}
	p.listen("127.0.0.1:0")
	t.Cleanup(p.cut)
	return p
}

func (p *proxy) listen(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, d)
			p.mu.Unlock()
			go func() { io.Copy(d, c); d.Close() }()
			go func() { io.Copy(c, d); c.Close() }()
		}
	}()
}

// cut closes the listener and every connection: the database is gone.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestWorkerLosesDatabase: a worker whose database stops answering in
// the middle of a run stops measuring at once (its benchmark is killed)
// and retries; the server finds the machine dead and queues its
// unfinished rounds again; when the database is back the worker takes
// them (the same machine: the only one) and the comparison completes
// with every run stored once.
func TestWorkerLosesDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the server to find the machine dead and for the worker to reconnect")
	}
	const runs = 4
	f := newFixture(t, runs, 12000000)
	u, err := url.Parse(f.url)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, u.Host)
	u.Host = p.addr
	saved := f.url
	f.url = u.String()
	f.worker(t, "w1", 0)
	f.url = saved
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	row, err := f.server.EnqueueCompare(ctx, fleet.CompareArgs{Job: f.spec, Class: "test", Commits: f.commits})
	if err != nil {
		t.Fatal(err)
	}
	wdir := filepath.Join(f.dir, "w1")
	var cut *rivertype.JobRow // the round job running when the database went away
	for cut == nil {
		if ctx.Err() != nil {
			t.Fatal("no round ran")
		}
		if benchRunning(wdir) {
			cut = roundRunning(t, f, 1)
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.cut()
	start := time.Now()
	for benchRunning(wdir) {
		if time.Since(start) > 20*time.Second {
			t.Fatal("the worker went on measuring without its database")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("the benchmark stopped %.1fs after the database went away", time.Since(start).Seconds())
	// The server finds the machine dead (no heartbeat for DeadAfter, 3 s
	// here) and cancels its unfinished rounds there; it queues them again
	// once a machine of the class is alive (w1, when it is back).
	for {
		if ctx.Err() != nil {
			t.Fatal("the server never gave up the dead machine's rounds")
		}
		j, err := f.server.River.JobGet(ctx, cut.ID)
		if err != nil && ctx.Err() == nil {
			t.Fatal(err)
		}
		if err == nil && cancelled(j) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("the server cancelled the dead machine's rounds %.1fs after the database went away", time.Since(start).Seconds())
	p.listen(p.addr)

	out := awaitCompare(ctx, t, f.server.River, row.ID, 200*time.Millisecond)
	log, _ := os.ReadFile(filepath.Join(f.dir, "w1.log"))
	for _, want := range []string{"lost the database", "the database answers again"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the worker's log does not say %q:\n%s", want, log)
		}
	}
	// Every round the server gave up from the one cut on (that one and
	// those not started) was finished by a job queued again (Move 1), on
	// w1 once it was back. (An earlier round whose runs were stored but
	// whose completion River had not recorded at the cut may be given up
	// too; the server finds it stored whole and does not queue it again.)
	var c fleet.RoundArgs
	_ = json.Unmarshal(cut.EncodedArgs, &c)
	finished := map[int]bool{}
	for _, m := range movedRounds(t, f) {
		if m.row.State == rivertype.JobStateCompleted && m.args.Machine == "w1" {
			finished[m.args.Round] = true
		}
	}
	gaveUp := 0
	for _, j := range jobs(t, f.server.River, "perfbot.round") {
		var a fleet.RoundArgs
		_ = json.Unmarshal(j.EncodedArgs, &a)
		if a.Move == 0 && j.State != rivertype.JobStateCompleted && a.Round >= c.Round {
			gaveUp++
			if !cancelled(j) {
				t.Errorf("round job %d (round %d) is %s, neither completed nor cancelled", j.ID, a.Round, j.State)
			}
			if !finished[a.Round] {
				t.Errorf("round %d, given up on w1, was not finished by a job queued again", a.Round)
			}
		}
	}
	if gaveUp == 0 || !finished[c.Round] {
		t.Errorf("round %d, cut in the middle of a run, was not finished by a job queued again (%d rounds given up)", c.Round, gaveUp)
	}
	j, _ := f.spec.Load()
	n := 0
	for _, c := range f.commits {
		recs, err := f.results.RunsWithoutValues(ctx, j.Key(), c, "")
		if err != nil {
			t.Fatal(err)
		}
		n += len(recs)
	}
	if len(out.Rounds) != runs || n != 2*runs {
		t.Errorf("rounds %v and %d runs stored; want %d rounds and %d runs", out.Rounds, n, runs, 2*runs)
	}
}

// roundRunning returns the round job at place round if it is running.
func roundRunning(t *testing.T, f *fixture, round int) *rivertype.JobRow {
	for _, j := range jobs(t, f.server.River, "perfbot.round") {
		var a fleet.RoundArgs
		_ = json.Unmarshal(j.EncodedArgs, &a)
		if j.State == rivertype.JobStateRunning && a.Round == round {
			return j
		}
	}
	return nil
}

// cancelled reports whether a job was cancelled, or marked for it while
// running (River's JobCancel of a running job).
func cancelled(j *rivertype.JobRow) bool {
	var m struct {
		CancelAttemptedAt *time.Time `json:"cancel_attempted_at"`
	}
	_ = json.Unmarshal(j.Metadata, &m)
	return j.State == rivertype.JobStateCancelled || m.CancelAttemptedAt != nil
}

// moved is a round job queued again after its machine stopped answering.
type moved struct {
	row  *rivertype.JobRow
	args fleet.RoundArgs
}

// movedRounds lists the round jobs queued again (Move >= 1).
func movedRounds(t *testing.T, f *fixture) []moved {
	var out []moved
	for _, j := range jobs(t, f.server.River, "perfbot.round") {
		var a fleet.RoundArgs
		_ = json.Unmarshal(j.EncodedArgs, &a)
		if a.Move >= 1 {
			out = append(out, moved{j, a})
		}
	}
	return out
}
