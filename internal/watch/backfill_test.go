package watch

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

func TestChooseBackfill(t *testing.T) {
	list := commits(10)
	set := func(hs ...string) map[string]bool {
		m := map[string]bool{}
		for _, h := range hs {
			m[h] = true
		}
		return m
	}
	for _, tc := range []struct {
		name         string
		since, until int
		tested       map[string]bool
		broken       map[string]bool
		policy       TestPolicy
		max          int
		ref          string
		want         []string
		done         bool
	}{
		{"first cycle: the start first, oldest first, and the end", 2, 9, nil, nil, TestPolicy{Every: 1}, 3, "", []string{"c02", "c03", "c09"}, false},
		{"first cycle, the range within the cap", 2, 4, nil, nil, TestPolicy{Every: 1}, 3, "", []string{"c02", "c03", "c04"}, false},
		{"goes on from the newest tested", 2, 9, set("c02", "c03", "c09"), nil, TestPolicy{Every: 1}, 3, "c03", []string{"c04", "c05", "c06"}, false},
		{"the end last, measured again beside its neighbour", 2, 9, set("c02", "c03", "c04", "c05", "c06", "c07", "c09"), nil, TestPolicy{Every: 1}, 3, "c07", []string{"c08", "c09"}, false},
		{"done", 2, 9, set("c02", "c03", "c04", "c05", "c06", "c07", "c08", "c09"), nil, TestPolicy{Every: 1}, 3, "", nil, true},
		{"every-3 keeps the end", 0, 9, set("c00"), nil, TestPolicy{Every: 3}, 20, "c00", []string{"c03", "c06", "c09"}, false},
		{"an existing history: its oldest tested is the end, measured again", 0, 5, set("c03", "c05", "c07"), nil, TestPolicy{Every: 1}, 20, "c03", []string{"c04", "c05"}, false},
		{"a broken build is passed over, the reference is the last that built", 0, 9, set("c00", "c01"), map[string]bool{"c02": true}, TestPolicy{Every: 1}, 2, "c01", []string{"c03", "c04"}, false},
		{"a first failure after the reference is built once more", 0, 9, set("c00", "c01", "c04"), map[string]bool{"c02": false, "c03": true}, TestPolicy{Every: 3}, 3, "c04", []string{"c07", "c09"}, false},
		{"a first failure is built once more", 0, 9, set("c00", "c01"), map[string]bool{"c02": false}, TestPolicy{Heads: true}, 3, "c01", []string{"c02", "c09"}, false},
	} {
		k := known{tested: tc.tested, broken: tc.broken, err: new(error)}
		if k.tested == nil {
			k.tested = map[string]bool{}
		}
		sel, done := chooseBackfill(list, tc.since, tc.until, k, tc.policy, tc.max)
		if done != tc.done || sel.Ref.Hash != tc.ref || !slices.Equal(hashes(sel.New), tc.want) {
			t.Errorf("%s: ref %q new %v done %v; want %q %v %v", tc.name, sel.Ref.Hash, hashes(sel.New), done, tc.ref, tc.want, tc.done)
		}
	}
}

func TestOlderRetries(t *testing.T) {
	list := commits(6)
	k := known{tested: map[string]bool{"c00": true, "c01": true, "c03": true, "c04": true}, broken: map[string]bool{"c02": false, "c05": true}}
	got := olderRetries(list, k, list[4])
	if len(got) != 1 || got[0].Ref.Hash != "c01" || !slices.Equal(hashes(got[0].New), []string{"c02"}) {
		t.Errorf("older retries %+v; want c02 against c01", got)
	}
}

// TestWatchBackfill: a watch file with start: on a branch of seven
// commits, max_commits 3: the first cycle tests the start, the next
// commit and the head (the range's end) in one session, and bisects the
// 2x slowdown at the fourth commit out of that step at once; the next
// cycles fill the range in oldest first (a new watcher in each, as after
// a restart: the progress is the store's), each batch against the newest
// commit tested before it, find the slowdown again as a step between
// neighbours (the same finding), measure the end again beside its
// neighbour, and then the head is followed. Real git, gcc and runs.
func TestWatchBackfill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C benchmark over four watch cycles")
	}
	bw := newBenchWatch(t, 6, "1000000", "", "jobs: [bench.yaml]\nbranches: [main]\nmax_commits: 3\n")
	r, dir, jobFile, base := bw.repo, bw.dir, bw.jobFile, bw.base
	var all []string
	for i := 1; i <= 6; i++ {
		passes := 1
		if i >= 3 {
			passes = 2
		}
		all = append(all, r.Commit(fmt.Sprintf("step %d", i), map[string]string{"bench.c": testutil.BenchC(passes, "base"), "README": fmt.Sprint(i)}))
	}
	slow := all[2]
	// start: names the base by an abbreviated hash.
	write(t, filepath.Join(dir, "watch.yaml"), fmt.Sprintf("jobs: [bench.yaml]\nbranches: [main]\nmax_commits: 3\nstart: %s\n", base[:10]))
	cfg, err := Load(filepath.Join(dir, "watch.yaml"))
	if err != nil || cfg.Start != base[:10] {
		t.Fatalf("start: read as %q, %v", cfg.Start, err)
	}
	ctx := context.Background()
	cycle := func(name string) *CycleReport {
		t.Helper()
		w := &Watcher{Config: cfg, CPUMode: "none", Logf: t.Logf}
		rep, err := w.Cycle(ctx)
		if err != nil || len(rep.Errors) > 0 {
			t.Fatalf("%s: %v %v", name, err, rep.Errors)
		}
		return rep
	}
	tested := func(rep *CycleReport) (got []string, refs []string) {
		for _, tc := range rep.Tested {
			got, refs = append(got, tc.Commit.Hash), append(refs, tc.Ref)
		}
		return got, refs
	}
	for i, want := range []struct {
		commits  []string
		ref      string
		findings []string
	}{
		{[]string{base, all[0], all[5]}, "", []string{slow}},
		{[]string{all[1], all[2], all[3]}, all[0], []string{slow}},
		{[]string{all[4], all[5]}, all[3], nil},
		{nil, "", nil},
	} {
		rep := cycle(fmt.Sprintf("cycle %d", i+1))
		got, refs := tested(rep)
		if !slices.Equal(got, want.commits) || (len(refs) > 0 && refs[0] != want.ref) || !slices.Equal(rep.Findings, want.findings) {
			t.Fatalf("cycle %d tested %v against %v, findings %v; want %v against %q, findings %v", i+1, short(got), short(refs), short(rep.Findings),
				short(want.commits), short([]string{want.ref}), short(want.findings))
		}
	}
	st, err := store.Open(filepath.Join(dir, ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	jobs, _ := job.Load(jobFile)
	bf, err := st.GetBackfill(ctx, jobs[0].Key(), "", "main")
	st.Close()
	if err != nil || !bf.Done || bf.Since != base || bf.Until != all[5] {
		t.Errorf("backfill %+v, %v; want base..head, done", bf, err)
	}
	// After it, the head is followed as usual.
	head := r.Commit("after", map[string]string{"README": "after"})
	if got, refs := tested(cycle("after the backfill")); !slices.Equal(got, []string{head}) || refs[0] != all[5] {
		t.Errorf("after the backfill tested %v against %v; want the new head against the last backfilled", short(got), short(refs))
	}

	// A start that is not on the branch is an error naming it.
	other := r.Git("commit-tree", "-m", "elsewhere", r.Git("rev-parse", "HEAD^{tree}"))
	cfg.Start = strings.TrimSpace(other)
	w := &Watcher{Config: cfg, CPUMode: "none", Logf: t.Logf}
	rep, err := w.Cycle(ctx)
	if err != nil || len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Error(), "is not on the first-parent history of main") {
		t.Errorf("a start off the branch: %v %v; want an error naming it", err, rep.Errors)
	}
	cfg.Start = "no-such-rev"
	if rep, _ := w.Cycle(ctx); len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Error(), `start "no-such-rev"`) {
		t.Errorf("an unknown start: %v", rep.Errors)
	}
}

func short(hs []string) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h[:min(len(h), 12)]
	}
	return out
}
