// Package demo generates real C benchmark projects with real git
// histories, for perfbot's demo and its end-to-end tests.
//
// [Create] writes a small C benchmark (bench.c, text.c, data.c and a
// Makefile that honours CFLAGS, LDFLAGS and EXTRA_OBJS) with a perfbot job
// file into a new git repository, and commits a history whose every
// commit has a known effect on the benchmark's metrics. The layouts hold
// for gcc 12.2 on x86-64 with GNU ld: the tests check each commit's layout
// with the ELF symbols and a disassembler. Whether a layout costs time is
// the CPU's business: [Calibrate] measures where the text kernel's inner
// loop runs fast and slow on the host and returns the [Placement] that
// puts the text-alignment commit between the two; TestEffects times every
// commit's effect on the host.
package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/perfbot/perfbot/internal/verdict"
)

// Effects of commits, in [Commit.Effect]. They match the verdicts of
// perfbot triage where one exists. The sizes are medians of pair ratios
// measured by TestEffects on the project's machines (AMD Zen 5, gcc 12.2).
const (
	// EffectBase marks the first commit.
	EffectBase = "base"
	// EffectTextAlignment: adds a function (text_trace, [Placement].Hook
	// bytes: 16, 32 or 48) just before text_kernel. No instruction of the
	// kernel changes, but its 11-byte inner loop (do { s += v; v >>= 1; }
	// while (--x)) moves from byte Placement.Fast to Placement.Slow of its
	// 64-byte line: with [DefaultPlacement] from 22 to 54, text_ms about
	// 1.38x on the project's AMD EPYC hosts. Building both sides with
	// [AlignCFLAGS], or linking [Placement.RestorePad] bytes of code first,
	// removes the effect.
	EffectTextAlignment = string(verdict.TextAlignment)
	// EffectDataAlignment: drops an unused 16-byte global (data_range)
	// that precedes data_kernel's two 16 KiB float arrays
	// (y[i] += a*x[i], AVX2), which moves them from 0 to 16 mod 32, so
	// half of their 32-byte loads split a cache line: data_ms about 1.49x.
	// Linking [DataRestorePad] bytes of data first (tools/pad.c) restores
	// the offset and the speed; [AlignCFLAGS] does not.
	EffectDataAlignment = string(verdict.DataAlignment)
	// EffectRealRegression: text_batch calls text_kernel a second time,
	// over 30 % of the input in the "triage" and "bisect" histories (text_ms
	// about 1.30x, also under AlignCFLAGS), over all of it in the "demo"
	// history (about 2.0x). The new code sits after the kernel, so the
	// kernel does not move.
	EffectRealRegression = string(verdict.RealRegression)
	// EffectNoChange: edits NOTES.md or a comment only; the binary is byte
	// for byte the same as its parent's.
	EffectNoChange = string(verdict.NoChange)
	// EffectBuildFailure: half of a variable rename, so bench.c does not
	// compile; the next commit (label "build-fix", EffectNoChange)
	// finishes it, and builds the same binary as before the rename.
	EffectBuildFailure = "build-failure"
	// EffectMerge: merges a branch; against its first parent it brings
	// the branch's changes (in the "bisect-merge" history, the real
	// regression).
	EffectMerge = "merge"
)

// Knobs that undo the alignment effects.
const (
	// AlignCFLAGS aligns every function and loop to 64 bytes; with it on
	// both sides the text-alignment commit changes nothing.
	AlignCFLAGS = "-falign-functions=64 -falign-loops=64"
	// DataRestorePad is the data padding (DATA_PAD of tools/pad.c) that
	// puts the data-alignment commit's arrays back at the base's offset
	// mod 32.
	DataRestorePad = 16
)

// Histories that [Create] knows.
const (
	// HistoryDemo is the README demo: base, text-alignment,
	// real-regression (2x), no-change, one after the other on main.
	HistoryDemo = "demo"
	// HistoryTriage is the base on main and one branch per case, whose
	// only commit has the base as its parent, so that each pair (base,
	// case) differs in that respect only: case/text-alignment,
	// case/data-alignment, case/real-regression and case/no-change.
	// Compare "main" with "case/<effect>", or the [Repo.ByLabel] hashes.
	HistoryTriage = "triage"
	// HistoryBisect is [Options.Commits] first-parent commits on main (64
	// by default) where one adds the real 30 % slowdown, one shifts the
	// hot loop (text alignment), one fails to build and is fixed by the
	// next, and all others edit notes or comments only. [Options.Seed]
	// places the special commits.
	HistoryBisect = "bisect"
	// HistoryBisectMerge is [Options.Commits] first-parent commits on main
	// (24 by default) where one shifts the hot loop (text alignment) and
	// one merges the branch "topic" (label "merge"), forked from an
	// earlier main commit, whose commits (labels "t01", ...) edit notes
	// only, except one: the real 30 % slowdown. A first-parent bisection
	// lands on the merge; the culprit is inside the branch.
	// [Options.Seed] places the special commits and the fork.
	HistoryBisectMerge = "bisect-merge"
	// HistoryWatch is [Options.Commits] first-parent commits on main (40
	// by default), the "bisect" history with a data alignment shift too:
	// one commit adds the real 30 % slowdown of text_ms, one shifts the
	// hot loop (text alignment), one drops data_range (data alignment:
	// data_ms), one fails to build and is fixed by the next, and all
	// others edit notes or comments only. perfbot watch's figures grow a
	// branch along it. [Options.Seed] places the special commits.
	HistoryWatch = "watch"
)

// Metrics printed by the benchmark and read by the job file. Each is the
// fastest of 40 batches of calls timed in one process, in milliseconds of
// the thread's CPU time.
const (
	MetricText = "text_ms" // a batch of text_kernel calls (ms, lower is better)
	MetricData = "data_ms" // a batch of data_kernel calls (ms, lower is better)
)

// DefaultBisectCommits is the length of the "bisect" history when
// [Options.Commits] is zero; DefaultMergeCommits that of main's
// first-parent history in the "bisect-merge" history; DefaultWatchCommits
// that of the "watch" history.
const (
	DefaultBisectCommits = 64
	DefaultMergeCommits  = 24
	DefaultWatchCommits  = 40
)

// Options selects the history that [Create] commits.
type Options struct {
	// History is "demo", "triage", "bisect", "bisect-merge" or "watch"
	// (see the History constants).
	History string
	// Commits is the number of commits of the "bisect" history, the base
	// included (0 means 64), of the "watch" history (0 means 40), or of
	// main's first-parent history in the "bisect-merge" history (0 means
	// 24; its branch has a third as many, at least 4); at least 8. Other
	// histories have a fixed length and need 0.
	Commits int
	// Seed places the special commits of the "bisect", "bisect-merge" and
	// "watch" histories; the same seed gives the same history.
	Seed uint64
	// Text places the text kernel's inner loop in the base and in the
	// text-alignment commit: [Calibrate] measures one for this CPU; nil
	// means [DefaultPlacement].
	Text *Placement
}

// Commit is one commit that [Create] made.
type Commit struct {
	Hash   string // full hash
	Parent string // full hash of the first parent; "" for the root
	Merged string // full hash of the second parent of a merge; "" otherwise
	// Branch is the branch the commit was made on: main, or the branch of
	// a commit off main's first-parent history ("case/...", "topic").
	Branch  string
	Label   string // unique within the repository; see [Repo.ByLabel]
	Subject string // first line of the message
	Effect  string // one of the Effect constants
	// Metric names the metric that shows the effect (text_ms or data_ms);
	// "" when the commit has no effect on any.
	Metric string
}

// Repo is a repository that [Create] made.
type Repo struct {
	Dir     string // absolute path of the repository
	JobFile string // absolute path of its perfbot job file
	History string // Options.History
	// Commits in the order they were made: first-parent order for the
	// "demo", "bisect" and "watch" histories; for "triage", the base then one
	// commit per case branch; for "bisect-merge", main's commits up to the
	// fork, the branch's, then main's others (the merge among them).
	Commits []Commit
}

// ByLabel returns the commit with the given label, or the zero Commit.
//
// Labels are the effect names for the special commits ("base",
// "text-alignment", "data-alignment", "real-regression", "no-change" in
// the demo and triage histories; "base", "text-alignment",
// "real-regression", "build-failure" and "build-fix" in the bisect
// history, and "data-alignment" too in the watch history) and "c07" (the
// commit's index, two digits or more) for the other commits of the bisect
// and watch histories.
func (r *Repo) ByLabel(label string) Commit {
	for _, c := range r.Commits {
		if c.Label == label {
			return c
		}
	}
	return Commit{}
}

// WithEffect returns the commits whose Effect is effect, in order.
func (r *Repo) WithEffect(effect string) []Commit {
	var out []Commit
	for _, c := range r.Commits {
		if c.Effect == effect {
			out = append(out, c)
		}
	}
	return out
}

// Index returns the position of the commit with the given label in
// r.Commits, or -1.
func (r *Repo) Index(label string) int {
	for i, c := range r.Commits {
		if c.Label == label {
			return i
		}
	}
	return -1
}

// Create makes dir (which must not exist or be empty) a git repository
// holding the benchmark and the history that opt selects, and returns
// what it made. It needs the git command, not a compiler. On a partial
// failure dir is left as it is, for inspection.
func Create(dir string, opt Options) (*Repo, error) {
	plan, err := planHistory(opt)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("demo: %v", err)
	}
	if err := emptyDir(abs); err != nil {
		return nil, err
	}
	g := &gitCmd{dir: abs}
	if err := g.init(); err != nil {
		return nil, err
	}
	repo := &Repo{Dir: abs, JobFile: filepath.Join(abs, JobFileName), History: opt.History}
	var commits []importCommit
	for i, st := range plan {
		files, err := st.tree.files()
		if err != nil {
			return nil, err
		}
		c := importCommit{ref: "refs/heads/main", parent: i, message: st.subject + "\n\n" + st.body + "\n", files: files}
		if st.branch != "" {
			c.ref, c.parent = "refs/heads/"+st.branch, 1
		}
		if st.parents != nil {
			c.parent = st.parents[0] + 1
			if len(st.parents) > 1 {
				c.merge = st.parents[1] + 1
			}
			if st.ref != "" {
				c.ref = "refs/heads/" + st.ref
			}
		}
		commits = append(commits, c)
	}
	hashes, err := g.fastImport(commits)
	if err != nil {
		return nil, err
	}
	for i, st := range plan {
		parent, merged := "", ""
		if p := commits[i].parent; p > 0 {
			parent = hashes[p-1]
		}
		if p := commits[i].merge; p > 0 {
			merged = hashes[p-1]
		}
		repo.Commits = append(repo.Commits, Commit{
			Hash: hashes[i], Parent: parent, Merged: merged, Label: st.label, Subject: st.subject,
			Effect: st.effect, Metric: st.metric, Branch: strings.TrimPrefix(commits[i].ref, "refs/heads/"),
		})
	}
	// Check out main: the base for "triage", the last commit otherwise.
	if err := g.run("checkout", "-q", "-f", "main"); err != nil {
		return nil, err
	}
	return repo, nil
}

// step is one planned commit.
type step struct {
	label, effect, metric string
	subject, body         string
	branch                string // for triage: branch created at the base before the commit
	tree                  *tree
	// parents, when set, are the plan indices of the commit's parents
	// (the first parent first), and ref its branch ("" for main).
	parents []int
	ref     string
}

func planHistory(opt Options) ([]step, error) {
	p := DefaultPlacement
	if opt.Text != nil {
		p = *opt.Text
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	switch opt.History {
	case HistoryDemo, HistoryTriage:
		if opt.Commits != 0 {
			return nil, fmt.Errorf("demo: history %q has a fixed length; Options.Commits must be 0, not %d", opt.History, opt.Commits)
		}
		if opt.History == HistoryDemo {
			return planDemo(p), nil
		}
		return planTriage(p), nil
	case HistoryBisect:
		n := opt.Commits
		if n == 0 {
			n = DefaultBisectCommits
		}
		if n < 8 || n > 10000 {
			return nil, fmt.Errorf("demo: history %q needs 8 to 10000 commits, not %d", opt.History, n)
		}
		return planBisect(n, opt.Seed, p), nil
	case HistoryBisectMerge:
		n := opt.Commits
		if n == 0 {
			n = DefaultMergeCommits
		}
		if n < 8 || n > 10000 {
			return nil, fmt.Errorf("demo: history %q needs 8 to 10000 commits, not %d", opt.History, n)
		}
		return planBisectMerge(n, opt.Seed, p), nil
	case HistoryWatch:
		n := opt.Commits
		if n == 0 {
			n = DefaultWatchCommits
		}
		if n < 8 || n > 10000 {
			return nil, fmt.Errorf("demo: history %q needs 8 to 10000 commits, not %d", opt.History, n)
		}
		return planWatch(n, opt.Seed, p), nil
	case "":
		return nil, fmt.Errorf("demo: Options.History is empty; want %s", historyNames)
	}
	return nil, fmt.Errorf("demo: unknown history %q; want %s", opt.History, historyNames)
}

// historyNames lists the histories for error messages.
var historyNames = fmt.Sprintf("%q, %q, %q, %q or %q", HistoryDemo, HistoryTriage, HistoryBisect, HistoryBisectMerge, HistoryWatch)

func baseTree(p Placement) *tree { return &tree{Lead: p.Lead} }

func baseStep(t *tree) step {
	return step{
		label: EffectBase, effect: EffectBase, tree: t,
		subject: "bench: text and data kernels with batch timing",
		body:    "Two kernels, timed in batches; the fastest batch is printed.",
	}
}

func textStep(t *tree, p Placement) step {
	t.Hook = p.Hook
	return step{
		label: EffectTextAlignment, effect: EffectTextAlignment, metric: MetricText, tree: t,
		subject: "bench: add a text_trace() patch site",
		body:    "A place for a tracer to patch in a call. Nothing calls it yet.",
	}
}

func dataStep(t *tree) step {
	t.NoRange = true
	return step{
		label: EffectDataAlignment, effect: EffectDataAlignment, metric: MetricData, tree: t,
		subject: "data: drop unused data_range",
		body:    "Nothing ever wrote or read it.",
	}
}

func realStep(t *tree, full bool) step {
	if full {
		t.ExtraWords, t.ExtraWhy = "N", "Check each result with a second pass."
		return step{
			label: EffectRealRegression, effect: EffectRealRegression, metric: MetricText, tree: t,
			subject: "text: check each kernel result with a second pass",
			body:    "Every text_kernel call is now followed by a verification pass over the same input.",
		}
	}
	t.ExtraWords, t.ExtraWhy = "N * 3 / 10", "Re-scan the head of the input, where new words arrive."
	return step{
		label: EffectRealRegression, effect: EffectRealRegression, metric: MetricText, tree: t,
		subject: "text: re-scan the input head after each call",
		body:    "New words arrive at the head of the input; scan its first 30 % again after each call.",
	}
}

func docStep(t *tree) step {
	t.Notes = append(t.Notes, "The checksum line is printed so that the kernels cannot be optimised away; it is not a metric.")
	return step{
		label: EffectNoChange, effect: EffectNoChange, tree: t,
		subject: "docs: explain the checksum line",
		body:    "Documentation only.",
	}
}

func planDemo(p Placement) []step {
	t := baseTree(p)
	s := []step{baseStep(t)}
	t = t.clone()
	s = append(s, textStep(t, p))
	t = t.clone()
	s = append(s, dataStep(t))
	t = t.clone()
	s = append(s, realStep(t, true))
	t = t.clone()
	return append(s, docStep(t))
}

func planTriage(p Placement) []step {
	base := baseTree(p)
	s := []step{baseStep(base)}
	for _, mk := range []func(*tree) step{
		func(t *tree) step { return textStep(t, p) },
		dataStep,
		func(t *tree) step { return realStep(t, false) },
		docStep,
	} {
		st := mk(base.clone())
		st.branch = "case/" + st.effect
		s = append(s, st)
	}
	return s
}

// emptyDir creates dir, or checks that an existing dir is empty.
func emptyDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("demo: %v", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("demo: %v", err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("demo: %s is not empty (it holds %s)", dir, ents[0].Name())
	}
	return nil
}

func writeFiles(dir string, files map[string]string) error {
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("demo: %v", err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return fmt.Errorf("demo: %v", err)
		}
	}
	return nil
}
