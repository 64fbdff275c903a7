package storetest

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
)

// The suite's cases of several Stores open on one database at once, as the
// processes of a fleet have it.

// testConcurrentOpen opens a fresh store from several goroutines at once:
// every Open succeeds, exactly one creates the store, and all of them
// share it.
func testConcurrentOpen(t *testing.T, b Backend) {
	const n = 4
	where := b.Fresh(t)
	stores := make([]Store, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = b.Open(t.Context(), t, where)
		})
	}
	close(start)
	wg.Wait()
	created := 0
	for i, s := range stores {
		if errs[i] != nil {
			t.Errorf("Open %d of a fresh store, %d at once: %v", i+1, n, errs[i])
			continue
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		})
		if s.Created() {
			created++
		}
	}
	if t.Failed() {
		return
	}
	if created != 1 {
		t.Errorf("%d of %d Opens of a fresh store at once report Created, want 1", created, n)
	}
	for i, s := range stores {
		if err := s.PutRun(t.Context(), run("job", "c1", "", i+1, "x")); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range stores {
		if runs, err := s.RunsWithoutValues(t.Context(), "job", "c1", ""); err != nil || len(runs) != n {
			t.Errorf("Store %d reads %d runs, %v; want the %d runs all Stores put", i+1, len(runs), err, n)
		}
	}
}

// testConcurrentPutRun has several writers on several Stores of one
// database put the same run keys at once, each run with its own values
// and each writer creating the job's metrics in another order (once per
// job: a Store remembers the metrics it has seen): a run stored several
// times stays one run, with the values of one of its puts, never a mix,
// and every metric exists once.
func testConcurrentPutRun(t *testing.T, b Backend) {
	const (
		nstores  = 4
		perStore = 2
		njobs    = 4
		nkeys    = 3
		nmetrics = 32
		rounds   = 2
	)
	where := b.Fresh(t)
	stores := make([]Store, nstores)
	for i := range stores {
		stores[i] = b.open(t, where)
	}
	names := make([]string, nmetrics)
	for i := range names {
		names[i] = fmt.Sprintf("m%d", i)
	}
	// putBy is run idx of job as writer w puts it: its metrics in an
	// order of its own, each value telling the writer and the metric.
	putBy := func(w int, job string, idx int) *store.RunRecord {
		r := run(job, "c1", "", idx)
		r.Machine = fmt.Sprintf("writer-%d", w)
		for i := range names {
			m := (i*(w+1) + w) % nmetrics
			if w%2 == 1 {
				m = nmetrics - 1 - (i+w)%nmetrics
			}
			r.Values = append(r.Values, metric.Value{Name: names[m], Unit: "ns", Better: metric.LowerIsBetter,
				Value: float64(w*10000 + idx*100 + m)})
		}
		return r
	}
	for j := range njobs {
		job := fmt.Sprintf("job-%d", j)
		var wg sync.WaitGroup
		start := make(chan struct{})
		errc := make(chan error, nstores*perStore)
		for w := range nstores * perStore {
			s := stores[w%nstores]
			wg.Go(func() {
				<-start
				for round := range rounds {
					for k := range nkeys {
						idx := (k+w+round)%nkeys + 1
						if err := s.PutRun(t.Context(), putBy(w, job, idx)); err != nil {
							errc <- fmt.Errorf("writer %d, %s run %d: %w", w, job, idx, err)
							return
						}
					}
				}
			})
		}
		close(start)
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Error(err)
		}
		if t.Failed() {
			return
		}
		for i, s := range stores {
			checkOneRunPerKey(t, s, i, job, nkeys, nmetrics, putBy)
		}
	}
}

// checkOneRunPerKey checks what Store i reads of job after the writers
// of testConcurrentPutRun put its runs 1 to nkeys.
func checkOneRunPerKey(t *testing.T, s Store, i int, job string, nkeys, nmetrics int, putBy func(w int, job string, idx int) *store.RunRecord) {
	t.Helper()
	runs, err := s.Runs(t.Context(), job, "c1", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != nkeys {
		t.Fatalf("Store %d reads %d runs of %s after several writers put each of its %d keys, want %d", i+1, len(runs), job, nkeys, nkeys)
	}
	for k, r := range runs {
		var w int
		if _, err := fmt.Sscanf(r.Machine, "writer-%d", &w); err != nil {
			t.Fatalf("%s run %d has machine %q", job, r.Index, r.Machine)
		}
		want := putBy(w, job, k+1)
		if r.Index != k+1 || !reflect.DeepEqual(r.Values, want.Values) {
			t.Errorf("%s run %d (index %d) of machine %s has values\n%v\nwant writer %d's\n%v", job, k+1, r.Index, r.Machine, r.Values, w, want.Values)
		}
	}
	samples, err := s.Samples(t.Context(), job, []string{"c1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(samples["c1"]) != nmetrics {
		t.Errorf("Samples of %s has %d metrics, want %d", job, len(samples["c1"]), nmetrics)
	}
	for name, ss := range samples["c1"] {
		if len(ss) != nkeys {
			t.Errorf("%s metric %s has %d samples, want %d", job, name, len(ss), nkeys)
		}
	}
	ms, err := s.Metrics(t.Context(), job)
	if err != nil || len(ms) != nmetrics {
		t.Errorf("Metrics of %s = %v, %v; want the %d metrics once each", job, ms, err, nmetrics)
	}
}
