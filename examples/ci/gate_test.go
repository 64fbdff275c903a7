package ci

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// jobFile is the test repository's job: a gcc-built benchmark of a few
// milliseconds a run, Markdown ignored, a small gate budget.
const jobFile = `repo: .
ignore: ["*.md"]
build:
  command: make bench
  artifacts: [bench]
run:
  command: ./bench 200000
  timeout: 60s
runs: 3
metrics:
  - name: work_ms
    regex: 'work_ms: (?P<value>[0-9.]+)'
    better: lower
gate:
  threshold: 5
  max_runs: 10
  max_time: 5m
  triage: false
`

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// perfbotBin builds perfbot from this tree once and returns the folder
// that holds it.
func perfbotBin(t *testing.T) string {
	t.Helper()
	testutil.NeedTool(t, "go", "gcc", "make")
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "perfbot-ci-")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, "perfbot"), "github.com/perfbot/perfbot/cmd/perfbot").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err: err, out: string(out)}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "go build perfbot: " + e.err.Error() + "\n" + e.out }

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// benchPR is a pull request of the benchmark's repository; head changes
// the files in change.
func benchPR(t *testing.T, change map[string]string) *pr {
	return newPR(t, map[string]string{
		"perfbot.yml": jobFile,
		"Makefile":    testutil.BenchMakefile,
		"bench.c":     testutil.BenchC(1, "base"),
		"README.md":   "# bench\n",
		".gitignore":  "bench\n.perfbot/\n",
	}, change)
}

// ghRun is one run of the gate workflow's job as the runner would take it.
type ghRun struct {
	steps    map[string]result // by id, or name
	outputs  map[string]map[string]string
	failed   bool
	summary  string
	artifact string // the folder the upload step would upload
}

var expr = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// runWorkflow runs the run: steps of github-actions.yml's gate job in the
// clone of p with a fake pull_request environment, in order; a step after
// a failure runs only when its if: has always(), as on GitHub. The uses:
// steps are the runner's (the clone stands for checkout; perfbot is on
// PATH as the cache would restore it). Expressions are those of a
// same-repository pull request; one the test does not know fails it.
func runWorkflow(t *testing.T, p *pr, api string) ghRun {
	t.Helper()
	w := loadWorkflow(t, "github-actions.yml")
	tmp := t.TempDir()
	summary := filepath.Join(tmp, "summary.md")
	known := map[string]string{
		"github.event.pull_request.number":   "7",
		"github.event.pull_request.head.sha": p.head,
		"github.token":                       "tok",
	}
	run := ghRun{steps: map[string]result{}, outputs: map[string]map[string]string{}}
	for i, s := range w.Jobs["gate"].Steps {
		if s.Run == "" {
			continue
		}
		if run.failed && !strings.Contains(s.If, "always()") {
			continue
		}
		env := baseEnv(t, perfbotBin(t))
		out := filepath.Join(tmp, "output"+string(rune('a'+i)))
		for k, v := range map[string]string{
			"GITHUB_ACTIONS":      "true",
			"GITHUB_EVENT_NAME":   "pull_request",
			"GITHUB_EVENT_PATH":   p.event(t, 7),
			"GITHUB_SHA":          p.head,
			"GITHUB_BASE_REF":     "main",
			"GITHUB_HEAD_REF":     "change",
			"GITHUB_REPOSITORY":   "o/r",
			"GITHUB_API_URL":      api,
			"GITHUB_WORKSPACE":    p.clone,
			"GITHUB_STEP_SUMMARY": summary,
			"GITHUB_OUTPUT":       out,
		} {
			env[k] = v
		}
		for _, vars := range []map[string]string{w.Env, s.Env} {
			for k, v := range vars {
				env[k] = expr.ReplaceAllStringFunc(v, func(m string) string {
					e := expr.FindStringSubmatch(m)[1]
					if id, key, ok := strings.Cut(strings.TrimPrefix(e, "steps."), ".outputs."); ok && strings.HasPrefix(e, "steps.") {
						return run.outputs[id][key]
					}
					val, ok := known[e]
					if !ok {
						t.Fatalf("step %q: env %s: the test does not know ${{ %s }}", s.Name, k, e)
					}
					return val
				})
			}
		}
		r := sh(t, p.clone, s.Run, env)
		key := s.ID
		if key == "" {
			key = s.Name
		}
		run.steps[key] = r
		run.outputs[s.ID] = outputs(t, out)
		if r.code != 0 {
			run.failed = true
		}
	}
	b, _ := os.ReadFile(summary)
	run.summary = string(b)
	run.artifact = filepath.Join(p.clone, "perfbot-report")
	return run
}

// needGate fails the test, saying why, when this tree's perfbot has no
// gate command yet.
func needGate(t *testing.T) {
	t.Helper()
	out, err := exec.Command(filepath.Join(perfbotBin(t), "perfbot"), "gate", "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "gate JOB BASE HEAD") {
		t.Fatalf("perfbot gate --help: %v: this tree's perfbot has no gate command (the recipes run perfbot gate JOB BASE HEAD)\n%s", err, out)
	}
}

// TestWorkflowDocsOnly: a pull request that changes only README.md
// (ignored) passes at once; the summary, the outcome, the artifact, the
// comment and a successful check run follow.
func TestWorkflowDocsOnly(t *testing.T) {
	needGate(t)
	p := benchPR(t, map[string]string{"README.md": "# bench\n\nNow documented.\n"})
	f := newForge(t, "tok")
	run := runWorkflow(t, p, f.URL)
	g := run.steps["gate"]
	if g.code != 0 || run.outputs["gate"]["outcome"] != "pass" || run.outputs["gate"]["status"] != "0" {
		t.Fatalf("gate step: exit %d, outputs %v\n%s%s", g.code, run.outputs["gate"], g.stdout, g.stderr)
	}
	checkReport(t, run, f, "pass", "success")
}

// TestWorkflowRegression: a change that triples the benchmark's work
// fails the gate step (exit 1, outcome regression); the report's steps
// still run, and the check run fails.
func TestWorkflowRegression(t *testing.T) {
	needGate(t)
	p := benchPR(t, map[string]string{"bench.c": testutil.BenchC(3, "three passes")})
	f := newForge(t, "tok")
	run := runWorkflow(t, p, f.URL)
	g := run.steps["gate"]
	if g.code != 1 || run.outputs["gate"]["outcome"] != "regression" || run.outputs["gate"]["status"] != "1" {
		t.Fatalf("gate step: exit %d, outputs %v, want 1 and regression\n%s%s", g.code, run.outputs["gate"], g.stdout, g.stderr)
	}
	checkReport(t, run, f, "regression", "failure")
	if !strings.Contains(run.summary, "work_ms") {
		t.Errorf("the step summary does not name the metric work_ms:\n%s", run.summary)
	}
}

// checkReport checks what follows the gate step: the summary, the
// artifact's files, one comment with the verdict line, the check run.
func checkReport(t *testing.T, run ghRun, f *forge, outcome, conclusion string) {
	t.Helper()
	if strings.TrimSpace(run.summary) == "" {
		t.Errorf("perfbot gate wrote nothing to $GITHUB_STEP_SUMMARY")
	}
	md, err := os.ReadFile(filepath.Join(run.artifact, "gate.md"))
	if err != nil {
		t.Fatalf("the artifact folder: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(run.artifact, "gate.outcome")); strings.TrimSpace(string(b)) != outcome {
		t.Errorf("artifact gate.outcome %q, want %s", b, outcome)
	}
	if b, _ := os.ReadFile(filepath.Join(run.artifact, "pr")); strings.TrimSpace(string(b)) != "7" {
		t.Errorf("artifact pr %q, want 7", b)
	}
	verdict, _, _ := strings.Cut(string(md), "\n")
	if !regexp.MustCompile(`regression|unchanged|no change|pass`).MatchString(verdict) {
		t.Errorf("gate.md's first line %q is not a verdict", verdict)
	}
	if len(f.comments) != 1 || f.comments[1] != "<!-- perfbot gate -->\n"+string(md) {
		t.Errorf("comments %v: want one, gate.md", f.comments)
	}
	if len(f.checks) != 1 || f.checks[0]["conclusion"] != conclusion {
		t.Errorf("check runs %v: want one, %s", f.checks, conclusion)
	}
}

// TestGitLabJob runs the GitLab job's before_script, script and
// after_script (perfbot as the cache restores it) on a docs-only merge
// request (exit 0) and with a missing job file (exit 2: an error is not
// allowed to fail, and the note says the gate did not run).
func TestGitLabJob(t *testing.T) {
	needGate(t)
	j := loadGitLab(t)
	for _, c := range []struct {
		name, job string
		code      int
		note      string
	}{
		{"docs only", "", 0, ""},
		{"no job file", "nope.yml", 2, "perfbot gate: error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := benchPR(t, map[string]string{"README.md": "# bench\n\nNow documented.\n"})
			f := newForge(t, "gl-tok")
			env := gitlabEnv(t, j, p, f.URL)
			if c.job != "" {
				env["PERFBOT_JOB"] = c.job
			}
			bin := filepath.Join(p.clone, ".go", "bin")
			if err := os.MkdirAll(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(perfbotBin(t), "perfbot"), filepath.Join(bin, "perfbot")); err != nil {
				t.Fatal(err)
			}
			r := sh(t, p.clone, strings.Join(append(j.BeforeScript, j.Script...), "\n"), env)
			if r.code != c.code {
				t.Fatalf("script: exit %d, want %d\n%s%s", r.code, c.code, r.stdout, r.stderr)
			}
			if a := sh(t, p.clone, strings.Join(j.AfterScript, "\n"), env); a.code != 0 {
				t.Fatalf("after_script: exit %d\n%s%s", a.code, a.stdout, a.stderr)
			}
			md, err := os.ReadFile(filepath.Join(p.clone, "gate.md"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(md), c.note) || len(f.comments) != 1 || f.comments[1] != "<!-- perfbot gate -->\n"+string(md) {
				t.Errorf("gate.md %q, notes %v: want one note, gate.md, with %q", md, f.comments, c.note)
			}
		})
	}
}
