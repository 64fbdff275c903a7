package ci

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v3"
)

// workflows are the GitHub Actions recipes.
var workflows = []string{"github-actions.yml", "github-actions-publish.yml"}

// TestWorkflowsLint lints the workflows with actionlint (its own checks
// and, where shellcheck is installed, the run: scripts); any error fails.
func TestWorkflowsLint(t *testing.T) {
	var sb strings.Builder
	l, err := actionlint.NewLinter(&sb, &actionlint.LinterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range workflows {
		errs, err := l.LintFile(w, nil)
		if err != nil {
			t.Fatalf("actionlint %s: %v", w, err)
		}
		for _, e := range errs {
			t.Errorf("actionlint: %s:%d:%d: %s [%s]", w, e.Line, e.Column, e.Message, e.Kind)
		}
	}
	if t.Failed() {
		t.Log(sb.String())
	}
}

// TestWorkflowsFit checks what the recipes promise beyond what actionlint
// checks: least permissions, the base commit in the clone, the caches,
// and the fork pull requests' follow-up reading the gate's artifact.
func TestWorkflowsFit(t *testing.T) {
	w := loadWorkflow(t, "github-actions.yml")
	if got := w.Permissions["contents"]; got != "read" || len(w.Permissions) != 1 {
		t.Errorf("github-actions.yml: workflow permissions %v, want contents: read only", w.Permissions)
	}
	j := w.Jobs["gate"]
	checkout := j.step(t, "actions/checkout@v4")
	if d := checkout.With["fetch-depth"]; d != "2" && d != "0" {
		t.Errorf("checkout fetch-depth %q: want 2 (the merge commit and its base) or 0", d)
	}
	var cached []string
	for _, s := range j.Steps {
		if strings.HasPrefix(s.Uses, "actions/cache@") {
			cached = append(cached, strings.Fields(s.With["path"])...)
		}
	}
	for _, p := range []string{".perfbot", "~/go/pkg/mod", "~/.cache/go-build"} {
		if !slices.Contains(cached, p) {
			t.Errorf("github-actions.yml: no cache of %s (cached: %v)", p, cached)
		}
	}
	if !strings.Contains(j.stepID(t, "gate").Run, "gate.sh") || j.stepID(t, "gate").Env["PERFBOT_INCONCLUSIVE_EXIT"] != "0" {
		t.Errorf("the gate step must run gate.sh with PERFBOT_INCONCLUSIVE_EXIT 0 (neutral through the check run)")
	}
	up := j.step(t, "actions/upload-artifact@v4")
	p := loadWorkflow(t, "github-actions-publish.yml")
	pj := p.Jobs["publish"]
	down := pj.step(t, "actions/download-artifact@v4")
	if up.With["name"] != down.With["name"] {
		t.Errorf("the gate uploads artifact %q, the follow-up downloads %q", up.With["name"], down.With["name"])
	}
	if !strings.Contains(p.On["workflow_run"].Workflows[0], w.Name) {
		t.Errorf("the follow-up runs after %v, the gate workflow is named %q", p.On["workflow_run"].Workflows, w.Name)
	}
	for _, s := range pj.Steps {
		if s.Uses == "actions/checkout@v4" && s.With["ref"] != "" {
			t.Errorf("the follow-up checks out %q: it must run the default branch's scripts, never the pull request's", s.With["ref"])
		}
	}
	if !strings.Contains(pj.If, "head_repository.full_name != github.repository") {
		t.Errorf("the follow-up must publish for forks only (the gate workflow publishes the others): if: %s", pj.If)
	}
}

// TestGitLabJobFits parses the GitLab job and checks the fields the
// recipe relies on.
func TestGitLabJobFits(t *testing.T) {
	j := loadGitLab(t)
	if len(j.Rules) == 0 || !strings.Contains(j.Rules[0].If, `$CI_PIPELINE_SOURCE == "merge_request_event"`) {
		t.Errorf("rules %v: want the merge request pipelines", j.Rules)
	}
	if !slices.Contains(j.AllowFailure.ExitCodes, 3) {
		t.Errorf("allow_failure.exit_codes %v: want 3 (inconclusive shows as a warning)", j.AllowFailure.ExitCodes)
	}
	var paths []string
	for _, c := range j.Cache {
		paths = append(paths, c.Paths...)
	}
	for _, want := range []string{".perfbot/", ".go/pkg/mod/", ".cache/go-build/"} {
		if !slices.Contains(paths, want) {
			t.Errorf("cache paths %v: no %s", paths, want)
		}
	}
	if j.Artifacts.When != "always" || !slices.Contains(j.Artifacts.Paths, "gate.md") {
		t.Errorf("artifacts %+v: want gate.md, when: always", j.Artifacts)
	}
	if !strings.Contains(strings.Join(j.Script, "\n"), "gate.sh") || !strings.Contains(strings.Join(j.AfterScript, "\n"), "publish.sh") {
		t.Errorf("script %q, after_script %q: want gate.sh, then publish.sh", j.Script, j.AfterScript)
	}
	if j.Variables["GIT_DEPTH"] == "" || j.Variables["PERFBOT_JOB"] == "" || j.Variables["PERFBOT_CI"] == "" {
		t.Errorf("variables %v: want GIT_DEPTH, PERFBOT_JOB and PERFBOT_CI", j.Variables)
	}
}

type workflow struct {
	Name        string
	On          map[string]struct{ Workflows []string }
	Permissions map[string]string
	Env         map[string]string
	Jobs        map[string]wfJob
}

type wfJob struct {
	If    string
	Steps []wfStep
}

type wfStep struct {
	ID, Name, Uses, Run, If string
	With, Env               map[string]string
}

func (j wfJob) step(t *testing.T, uses string) wfStep {
	t.Helper()
	for _, s := range j.Steps {
		if s.Uses == uses {
			return s
		}
	}
	t.Fatalf("no step uses %s", uses)
	return wfStep{}
}

func (j wfJob) stepID(t *testing.T, id string) wfStep {
	t.Helper()
	for _, s := range j.Steps {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no step with id %s", id)
	return wfStep{}
}

func loadWorkflow(t *testing.T, path string) workflow {
	t.Helper()
	var w workflow
	loadYAML(t, path, &w)
	return w
}

type gitlabJob struct {
	Image     string
	Rules     []struct{ If string }
	Variables map[string]string
	Cache     []struct {
		Paths []string
		When  string
	}
	BeforeScript []string `yaml:"before_script"`
	Script       []string
	AfterScript  []string `yaml:"after_script"`
	AllowFailure struct {
		ExitCodes []int `yaml:"exit_codes"`
	} `yaml:"allow_failure"`
	Artifacts struct {
		When  string
		Paths []string
	}
}

func loadGitLab(t *testing.T) gitlabJob {
	t.Helper()
	var jobs map[string]gitlabJob
	loadYAML(t, "gitlab-ci.yml", &jobs)
	j, ok := jobs["perfbot-gate"]
	if !ok {
		t.Fatalf("gitlab-ci.yml: no job perfbot-gate")
	}
	return j
}

func loadYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
