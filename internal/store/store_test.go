package store_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/store/storetest"
	"github.com/perfbot/perfbot/internal/testutil"
)

func open(t *testing.T, dir string) *store.Store {
	t.Helper()
	s, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestMain(m *testing.M) { os.Exit(testutil.RunWithPostgres(m)) }

// sqliteBackend is the SQLite store in a fresh folder.
var sqliteBackend = storetest.Backend{
	Fresh: func(t *testing.T) string { return t.TempDir() },
	Open: func(_ context.Context, _ *testing.T, dir string) (storetest.Store, error) {
		return store.Open(dir)
	},
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Exercise(t, sqliteBackend)
}

func TestConformancePostgres(t *testing.T) {
	t.Parallel()
	storetest.Exercise(t, postgresBackend)
}

func TestOpenLayout(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a", ".perfbot")
	s := open(t, dir)
	if s.Dir() != dir {
		t.Errorf("Dir() = %q, want %q", s.Dir(), dir)
	}
	for _, p := range []string{filepath.Join(dir, "perfbot.db"), filepath.Join(dir, "results")} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	var mode string
	db, err := sql.Open("sqlite", filepath.Join(dir, "perfbot.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}

	for _, tt := range []struct {
		key  store.RunKey
		want string
	}{
		{store.RunKey{Job: "j1", Commit: "abc", Index: 3}, "results/j1/abc/default/3"},
		{store.RunKey{Job: "j1", Commit: "abc", Variant: "align64", Index: 12}, "results/j1/abc/align64/12"},
		{store.RunKey{Job: "..", Commit: "a/b", Variant: "x y", Index: 1}, "results/%2E%2E/a%2Fb/x%20y/1"},
	} {
		if got := s.RunDir(tt.key); got != filepath.Join(dir, tt.want) {
			t.Errorf("RunDir(%+v) = %q, want %q", tt.key, got, filepath.Join(dir, tt.want))
		}
	}
}

// TestReopen checks that what one Store wrote is read by a second one open
// on the same folder at the same time, and after both are closed.
func TestReopen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	s1, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := &store.RunRecord{RunKey: store.RunKey{Job: "j", Commit: "c", Index: 1}, Status: store.RunOK,
		Values: []metric.Value{{Name: "t", Unit: "s", Better: metric.LowerIsBetter, Value: 1.5}}}
	if err := s1.PutRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	// s2 learns metric "t" from the database, not from s1's cache.
	r.Index = 2
	if err := s2.PutRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Values[0].Unit = "ms"
	if err := s2.PutRun(ctx, r); err == nil {
		t.Error("second Store accepted metric t in ms after the first stored it in s")
	}
	for _, s := range []*store.Store{s1, s2} {
		if runs, err := s.Runs(ctx, "j", "c", ""); err != nil || len(runs) != 2 {
			t.Errorf("Runs = %d runs, %v; want 2", len(runs), err)
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}
	s3 := open(t, dir)
	if runs, err := s3.Runs(ctx, "j", "c", ""); err != nil || len(runs) != 2 || runs[1].Values[0].Value != 1.5 {
		t.Errorf("after reopening, Runs = %+v, %v; want 2 runs", runs, err)
	}
}

// durabilityEnv names the folder the child process of TestDurability
// writes to, and durabilityURLEnv the PostgreSQL database it writes to
// instead, when set (with the folder for its files).
const (
	durabilityEnv    = "PERFBOT_STORE_DURABILITY_DIR"
	durabilityURLEnv = "PERFBOT_STORE_DURABILITY_URL"
)

// openDurable opens the store of the durability tests: the database at
// url with its files in dir, or the folder dir when url is "".
func openDurable(dir, url string) (*store.Store, error) {
	if url == "" {
		return store.Open(dir)
	}
	return store.OpenURL(context.Background(), url, store.Options{Dir: dir})
}

const durabilityValues = 2000

func durabilityRun(i int) *store.RunRecord {
	r := &store.RunRecord{RunKey: store.RunKey{Job: "j", Commit: "c", Index: i}, Status: store.RunOK}
	for k := range durabilityValues {
		r.Values = append(r.Values, metric.Value{Name: "m" + strconv.Itoa(k), Unit: "ns", Better: metric.LowerIsBetter, Value: float64(i*durabilityValues + k)})
	}
	return r
}

// TestDurabilityChild is the child process of TestDurability: it puts runs,
// from the one after the last stored, until killed, printing the index of
// each run PutRun returned for.
func TestDurabilityChild(t *testing.T) {
	dir := os.Getenv(durabilityEnv)
	if dir == "" {
		t.Skip("helper process of TestDurability")
	}
	s, err := openDurable(dir, os.Getenv(durabilityURLEnv))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.RunsWithoutValues(t.Context(), "j", "c", "")
	if err != nil {
		t.Fatal(err)
	}
	for i := len(runs) + 1; i <= 10000; i++ {
		if err := s.PutRun(t.Context(), durabilityRun(i)); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("committed %d\n", i)
	}
}

// TestDurability SIGKILLs a process that is putting runs, four times, each
// time checking that every run the process reported committed is stored,
// with all its values, and that no run is stored partially.
func TestDurability(t *testing.T) {
	t.Parallel()
	testDurability(t, t.TempDir(), "")
}

// TestDurabilityPostgres is TestDurability on PostgreSQL: a run is one
// transaction, which the server rolls back when its client dies.
func TestDurabilityPostgres(t *testing.T) {
	t.Parallel()
	testDurability(t, t.TempDir(), testutil.Postgres(t))
}

func testDurability(t *testing.T, dir, url string) {
	for round := range 4 {
		// A PutRun of durabilityValues takes some milliseconds: kill the
		// child at different points inside one.
		reported := killChild(t, dir, url, 8, time.Duration(round)*3*time.Millisecond)
		checkDurable(t, dir, url, reported)
	}
}

// killChild starts TestDurabilityChild on the store (dir, url), SIGKILLs
// it delay after it has reported n runs committed (so that it dies inside
// a later PutRun), and returns the last run it reported.
func killChild(t *testing.T, dir, url string, n int, delay time.Duration) (reported int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDurabilityChild$", "-test.count=1", "-test.v=false")
	cmd.Env = append(os.Environ(), durabilityEnv+"="+dir, durabilityURLEnv+"="+url)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var other strings.Builder // the child's other output, e.g. a t.Fatal
	killed := false
	sc := bufio.NewScanner(out)
	for count := 0; sc.Scan(); {
		i, ok := strings.CutPrefix(sc.Text(), "committed ")
		if !ok {
			fmt.Fprintln(&other, sc.Text())
			continue
		}
		if reported, err = strconv.Atoi(i); err != nil {
			t.Fatalf("child printed %q", sc.Text())
		}
		if count++; count == n && !killed {
			time.Sleep(delay)
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child ended before it was killed (%v), having committed up to run %d; output:\n%s%s", err, reported, other.String(), stderr.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child was not killed by SIGKILL: %v", err)
	}
	return reported
}

// checkDurable checks that the runs stored in (dir, url) are 1, 2, ... up
// to at least reported, each with all its values.
func checkDurable(t *testing.T, dir, url string, reported int) {
	t.Helper()
	s, err := openDurable(dir, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs(t.Context(), "j", "c", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) < reported {
		t.Fatalf("child reported run %d committed, %d runs stored", reported, len(runs))
	}
	for i, r := range runs {
		want := durabilityRun(i + 1)
		if r.Index != i+1 {
			t.Fatalf("stored run %d has index %d", i+1, r.Index)
		}
		if len(r.Values) != len(want.Values) {
			t.Fatalf("run %d stored with %d values, want %d", r.Index, len(r.Values), len(want.Values))
		}
		for k := range r.Values {
			if r.Values[k] != want.Values[k] {
				t.Fatalf("run %d value %d = %+v, want %+v", r.Index, k, r.Values[k], want.Values[k])
			}
		}
	}
	t.Logf("child reported run %d committed; %d runs stored", reported, len(runs))
}
