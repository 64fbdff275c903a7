package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/testutil"
)

// git runs git in dir and returns its trimmed output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	g := &gitCmd{dir: dir}
	out, err := g.output(nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

func create(t *testing.T, opt Options) *Repo {
	t.Helper()
	r, err := Create(filepath.Join(t.TempDir(), "repo"), opt)
	if err != nil {
		t.Fatalf("Create(%+v): %v", opt, err)
	}
	return r
}

// checkCommits checks what every history must hold: labels unique and
// found by ByLabel, parents and subjects as git has them, a clean work tree.
func checkCommits(t *testing.T, r *Repo) {
	t.Helper()
	// hash -> "parents\x00subject", for every commit, in one git call.
	info := make(map[string]string)
	for _, line := range strings.Split(git(t, r.Dir, "log", "--all", "--format=%H%x00%P%x00%s"), "\n") {
		hash, rest, _ := strings.Cut(line, "\x00")
		info[hash] = rest
	}
	if len(info) != len(r.Commits) {
		t.Errorf("the repository has %d commits, Commits lists %d", len(info), len(r.Commits))
	}
	seen := make(map[string]bool)
	for i, c := range r.Commits {
		if seen[c.Label] {
			t.Errorf("label %q used twice", c.Label)
		}
		seen[c.Label] = true
		if got := r.ByLabel(c.Label); got != c {
			t.Errorf("ByLabel(%q) = %+v, want %+v", c.Label, got, c)
		}
		if r.Index(c.Label) != i {
			t.Errorf("Index(%q) = %d, want %d", c.Label, r.Index(c.Label), i)
		}
		parents := c.Parent
		if c.Merged != "" {
			parents += " " + c.Merged
		}
		if got, want := info[c.Hash], parents+"\x00"+c.Subject; got != want {
			t.Errorf("commit %s: git has parents and subject %q, Commit %q", c.Label, got, want)
		}
		if (i == 0) != (c.Effect == EffectBase) {
			t.Errorf("commit %d (%s) has effect %q", i, c.Label, c.Effect)
		}
		wantMetric := map[string]string{
			EffectTextAlignment: MetricText, EffectRealRegression: MetricText, EffectDataAlignment: MetricData, EffectMerge: MetricText,
		}[c.Effect]
		if c.Metric != wantMetric {
			t.Errorf("commit %s (%s): Metric %q, want %q", c.Label, c.Effect, c.Metric, wantMetric)
		}
	}
	if r.ByLabel("no-such-label") != (Commit{}) {
		t.Error("ByLabel of an unknown label is not the zero Commit")
	}
	if st := git(t, r.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("work tree not clean:\n%s", st)
	}
}

// firstParents returns main's first-parent history, oldest first.
func firstParents(t *testing.T, dir string) []string {
	return strings.Fields(git(t, dir, "rev-list", "--first-parent", "--reverse", "main"))
}

func hashes(cs []Commit) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Hash)
	}
	return out
}

func TestDemoHistory(t *testing.T) {
	testutil.NeedTool(t, "git")
	r := create(t, Options{History: HistoryDemo})
	checkCommits(t, r)
	var got []string
	for _, c := range r.Commits {
		got = append(got, c.Label+"/"+c.Effect)
	}
	want := []string{"base/base", "text-alignment/text-alignment", "data-alignment/data-alignment", "real-regression/real-regression", "no-change/no-change"}
	if !slices.Equal(got, want) {
		t.Fatalf("demo commits = %v, want %v", got, want)
	}
	if fp := firstParents(t, r.Dir); !slices.Equal(fp, hashes(r.Commits)) {
		t.Errorf("main's first-parent history %v differs from Commits %v", fp, hashes(r.Commits))
	}
	if head := git(t, r.Dir, "rev-parse", "HEAD"); head != r.Commits[4].Hash {
		t.Errorf("HEAD = %s, want the last commit %s", head, r.Commits[4].Hash)
	}
	checkJobFile(t, r)
}

func TestTriageHistory(t *testing.T) {
	testutil.NeedTool(t, "git")
	r := create(t, Options{History: HistoryTriage})
	checkCommits(t, r)
	base := r.ByLabel(EffectBase)
	if head := git(t, r.Dir, "rev-parse", "HEAD"); head != base.Hash {
		t.Errorf("HEAD = %s, want the base %s", head, base.Hash)
	}
	for _, effect := range []string{EffectTextAlignment, EffectDataAlignment, EffectRealRegression, EffectNoChange} {
		c := r.ByLabel(effect)
		if c.Effect != effect || c.Parent != base.Hash {
			t.Errorf("case %s: %+v, want effect %s with parent %s", effect, c, effect, base.Hash)
		}
		if got := git(t, r.Dir, "rev-parse", "case/"+effect); got != c.Hash {
			t.Errorf("branch case/%s = %s, want %s", effect, got, c.Hash)
		}
	}
	// Each case touches only what its effect says.
	for effect, files := range map[string]string{
		EffectTextAlignment:  "text.c",
		EffectDataAlignment:  "data.c",
		EffectRealRegression: "bench.c",
		EffectNoChange:       "NOTES.md",
	} {
		c := r.ByLabel(effect)
		if got := git(t, r.Dir, "diff", "--name-only", c.Parent, c.Hash); got != files {
			t.Errorf("case %s changes %q, want %q", effect, got, files)
		}
	}
	checkJobFile(t, r)
}

func TestBisectHistory(t *testing.T) {
	testutil.NeedTool(t, "git")
	r := create(t, Options{History: HistoryBisect, Seed: 7})
	checkCommits(t, r)
	if len(r.Commits) != DefaultBisectCommits {
		t.Fatalf("%d commits, want %d", len(r.Commits), DefaultBisectCommits)
	}
	if fp := firstParents(t, r.Dir); !slices.Equal(fp, hashes(r.Commits)) {
		t.Errorf("main's first-parent history differs from Commits")
	}
	checkBisectPlan(t, r.Commits)
	// Quiet commits only add lines to NOTES.md or to a comment.
	quiet := make(map[string]string)
	for _, c := range r.Commits {
		if c.Effect == EffectNoChange && c.Label != "build-fix" {
			quiet[c.Hash] = c.Label
		}
	}
	log := git(t, r.Dir, "log", "--first-parent", "-p", "-U0", "--format=commit %H", "main")
	var label string
	added := make(map[string]int)
	for _, line := range strings.Split(log, "\n") {
		switch {
		case strings.HasPrefix(line, "commit "):
			label = quiet[strings.TrimPrefix(line, "commit ")]
		case label == "" || strings.HasPrefix(line, "+++") || strings.HasPrefix(line, "---"):
		case strings.HasPrefix(line, "-"):
			t.Errorf("quiet commit %s removes a line: %q", label, line)
		case strings.HasPrefix(line, "+ *") || strings.HasPrefix(line, "+- "):
			added[label]++
		case strings.HasPrefix(line, "+"):
			t.Errorf("quiet commit %s adds a line that is neither a comment nor a note: %q", label, line)
		}
	}
	for _, label := range quiet {
		if added[label] == 0 {
			t.Errorf("quiet commit %s adds no comment or note", label)
		}
	}
	checkJobFile(t, r)
}

func TestWatchHistory(t *testing.T) {
	testutil.NeedTool(t, "git")
	r := create(t, Options{History: HistoryWatch, Seed: 4})
	checkCommits(t, r)
	if len(r.Commits) != DefaultWatchCommits {
		t.Fatalf("%d commits, want %d", len(r.Commits), DefaultWatchCommits)
	}
	if fp := firstParents(t, r.Dir); !slices.Equal(fp, hashes(r.Commits)) {
		t.Errorf("main's first-parent history differs from Commits")
	}
	checkLinePlan(t, r.Commits, EffectBase, EffectTextAlignment, EffectDataAlignment, EffectRealRegression, EffectBuildFailure)
	for effect, files := range map[string]string{
		EffectTextAlignment:  "text.c",
		EffectDataAlignment:  "data.c",
		EffectRealRegression: "bench.c",
		EffectBuildFailure:   "bench.c",
		"build-fix":          "bench.c",
	} {
		c := r.ByLabel(effect)
		if got := git(t, r.Dir, "diff", "--name-only", c.Parent, c.Hash); got != files {
			t.Errorf("commit %s changes %q, want %q", effect, got, files)
		}
	}
	checkJobFile(t, r)
}

// checkBisectPlan checks the special commits of a bisect history.
func checkBisectPlan(t *testing.T, cs []Commit) {
	t.Helper()
	checkLinePlan(t, cs, EffectBase, EffectTextAlignment, EffectRealRegression, EffectBuildFailure)
}

// checkLinePlan checks the commits of a first-parent history with one
// commit of each special effect (the base and the build failure among
// them), a build failure followed by its fix, and quiet commits labelled
// by their index otherwise.
func checkLinePlan(t *testing.T, cs []Commit, special ...string) {
	t.Helper()
	count := make(map[string]int)
	for i, c := range cs {
		count[c.Effect]++
		switch {
		case c.Effect == EffectBuildFailure:
			if i+1 >= len(cs) || cs[i+1].Label != "build-fix" || cs[i+1].Effect != EffectNoChange {
				t.Errorf("build failure at %d is not followed by its fix", i)
			}
		case c.Effect == EffectNoChange && c.Label != "build-fix":
			if want := fmt.Sprintf("c%02d", i); c.Label != want {
				t.Errorf("commit %d labelled %q, want %q", i, c.Label, want)
			}
		}
	}
	for _, e := range special {
		if count[e] != 1 {
			t.Errorf("%d commits with effect %s, want 1", count[e], e)
		}
	}
	if count[EffectNoChange] != len(cs)-len(special) {
		t.Errorf("%d no-change commits, want %d", count[EffectNoChange], len(cs)-len(special))
	}
}

// TestBisectPlans checks the placement of the special commits over many
// seeds and lengths without git.
func TestBisectPlans(t *testing.T) {
	positions := make(map[[3]int]bool)
	for _, n := range []int{8, 9, 16, 64, 200} {
		for seed := range uint64(50) {
			steps := planBisect(n, seed, DefaultPlacement)
			if len(steps) != n {
				t.Fatalf("planBisect(%d, %d) planned %d commits", n, seed, len(steps))
			}
			cs := make([]Commit, n)
			var pos [3]int
			for i, s := range steps {
				cs[i] = Commit{Label: s.label, Effect: s.effect}
				switch s.effect {
				case EffectRealRegression:
					pos[0] = i
				case EffectTextAlignment:
					pos[1] = i
				case EffectBuildFailure:
					pos[2] = i
				}
			}
			checkBisectPlan(t, cs)
			if n == 64 {
				positions[pos] = true
			}
			// Deterministic.
			again := planBisect(n, seed, DefaultPlacement)
			for i := range steps {
				if steps[i].label != again[i].label || steps[i].subject != again[i].subject {
					t.Fatalf("planBisect(%d, %d) is not deterministic at commit %d", n, seed, i)
				}
			}
		}
	}
	if len(positions) < 40 {
		t.Errorf("50 seeds gave only %d distinct placements of the special commits", len(positions))
	}
}

// TestWatchPlans checks the watch history's plan over many seeds and
// lengths without git, and that a seed's bisect history is the one it was
// before the watch history existed (its own random stream).
func TestWatchPlans(t *testing.T) {
	positions := make(map[[4]int]bool)
	for _, n := range []int{8, 9, 40, 200} {
		for seed := range uint64(50) {
			steps := planWatch(n, seed, DefaultPlacement)
			cs := make([]Commit, len(steps))
			var pos [4]int
			for i, s := range steps {
				cs[i] = Commit{Label: s.label, Effect: s.effect}
				if k := slices.Index([]string{EffectRealRegression, EffectTextAlignment, EffectDataAlignment, EffectBuildFailure}, s.effect); k >= 0 {
					pos[k] = i
				}
			}
			if len(cs) != n {
				t.Fatalf("planWatch(%d, %d) planned %d commits", n, seed, len(cs))
			}
			checkLinePlan(t, cs, EffectBase, EffectTextAlignment, EffectDataAlignment, EffectRealRegression, EffectBuildFailure)
			if n == 40 {
				positions[pos] = true
			}
		}
	}
	if len(positions) < 45 {
		t.Errorf("50 seeds gave only %d distinct placements of the special commits", len(positions))
	}
	// Seed 3's 12-commit bisect history (TestDeterministicHashes) keeps its
	// special commits where they were.
	var got []string
	for i, s := range planBisect(12, 3, DefaultPlacement) {
		if s.effect != EffectNoChange {
			got = append(got, fmt.Sprintf("%s@%d", s.effect, i))
		}
	}
	if want := bisect12Seed3; strings.Join(got, " ") != want {
		t.Errorf("planBisect(12, 3) = %v, want %s", got, want)
	}
}

// bisect12Seed3 is planBisect(12, 3)'s special commits.
const bisect12Seed3 = "base@0 real-regression@1 build-failure@3 text-alignment@7"

func TestDeterministicHashes(t *testing.T) {
	testutil.NeedTool(t, "git")
	for _, opt := range []Options{{History: HistoryDemo}, {History: HistoryTriage}, {History: HistoryBisect, Commits: 12, Seed: 3}, {History: HistoryBisectMerge, Commits: 12, Seed: 3}, {History: HistoryWatch, Commits: 12, Seed: 3}} {
		a, b := create(t, opt), create(t, opt)
		if !slices.Equal(hashes(a.Commits), hashes(b.Commits)) {
			t.Errorf("%+v: two runs gave different hashes:\n%v\n%v", opt, hashes(a.Commits), hashes(b.Commits))
		}
	}
	a := create(t, Options{History: HistoryBisect, Commits: 12, Seed: 3})
	b := create(t, Options{History: HistoryBisect, Commits: 12, Seed: 4})
	if slices.Equal(hashes(a.Commits), hashes(b.Commits)) {
		t.Error("seeds 3 and 4 gave the same history")
	}
}

// checkJobFile loads the job file with perfbot's own job reader.
func checkJobFile(t *testing.T, r *Repo) {
	t.Helper()
	if r.JobFile != filepath.Join(r.Dir, JobFileName) {
		t.Errorf("JobFile = %s", r.JobFile)
	}
	jobs, err := job.Load(r.JobFile)
	if err != nil {
		t.Fatalf("job.Load(%s): %v", r.JobFile, err)
	}
	if len(jobs) != 1 {
		t.Fatalf("job file expands to %d jobs, want 1", len(jobs))
	}
	j := jobs[0]
	dir, _ := filepath.EvalSymlinks(r.Dir)
	repo, _ := filepath.EvalSymlinks(j.Repo)
	if repo != dir {
		t.Errorf("job repo = %s, want %s", j.Repo, r.Dir)
	}
	if j.Build.Command != "make bench" || !slices.Equal(j.Build.Artifacts, []string{"bench"}) {
		t.Errorf("job build = %+v", j.Build)
	}
	if j.Run.Command != "./bench all 40" || j.Run.Timeout != 60*time.Second || j.Runs != 6 {
		t.Errorf("job run = %+v, runs %d", j.Run, j.Runs)
	}
	var names []string
	for _, m := range j.Metrics {
		names = append(names, m.Name)
		if m.Kind != metric.KindRegex || m.Better != metric.LowerIsBetter {
			t.Errorf("metric %s: kind %s, better %s", m.Name, m.Kind, m.Better)
		}
		if !strings.HasPrefix(m.Pattern, m.Name+": ") {
			t.Errorf("metric %s: pattern %q", m.Name, m.Pattern)
		}
	}
	if !slices.Equal(names, []string{MetricText, MetricData}) {
		t.Errorf("job metrics = %v", names)
	}
}

func TestCreateErrors(t *testing.T) {
	testutil.NeedTool(t, "git")
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		opt  Options
		want string
	}{
		{full, Options{History: HistoryDemo}, "is not empty"},
		{t.TempDir(), Options{}, "History is empty"},
		{t.TempDir(), Options{History: "bisekt"}, `unknown history "bisekt"`},
		{t.TempDir(), Options{History: HistoryDemo, Commits: 5}, "fixed length"},
		{t.TempDir(), Options{History: HistoryBisect, Commits: 5}, "8 to 10000 commits"},
		{t.TempDir(), Options{History: HistoryBisectMerge, Commits: 7}, "8 to 10000 commits"},
		{t.TempDir(), Options{History: HistoryTriage, Text: &Placement{Lead: 64, Hook: 32}}, "lead 64 bytes is not in 0..63"},
		{t.TempDir(), Options{History: HistoryTriage, Text: &Placement{Lead: 3, Hook: 20}}, "hook 20 bytes is not 16, 32 or 48"},
	} {
		_, err := Create(tc.dir, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Create(%+v) = %v, want an error containing %q", tc.opt, err, tc.want)
		}
	}
}
