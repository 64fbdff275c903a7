package ci

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRevsStep runs the workflow's "Base and head" step in a shallow
// clone of a pull request with a pull_request event payload: it finds the
// base in the payload, fetches it (depth 1 left it out) and hands both
// commits to the next step through $GITHUB_OUTPUT.
func TestRevsStep(t *testing.T) {
	p := newPR(t, map[string]string{"a.txt": "one\n"}, map[string]string{"a.txt": "two\n"})
	step := loadWorkflow(t, "github-actions.yml").Jobs["gate"].stepID(t, "revs")
	if r := sh(t, p.clone, "git cat-file -e "+p.base+"^{commit}", baseEnv(t)); r.code == 0 {
		t.Fatalf("the shallow clone already has the base: the test would not show the fetch")
	}
	env := baseEnv(t)
	out := filepath.Join(t.TempDir(), "output")
	for k, v := range map[string]string{
		"PERFBOT_CI":        "ci/perfbot",
		"GITHUB_ACTIONS":    "true",
		"GITHUB_EVENT_NAME": "pull_request",
		"GITHUB_EVENT_PATH": p.event(t, 7),
		"GITHUB_SHA":        p.head,
		"GITHUB_BASE_REF":   "main",
		"GITHUB_OUTPUT":     out,
	} {
		env[k] = v
	}
	r := sh(t, p.clone, step.Run, env)
	if r.code != 0 {
		t.Fatalf("revs step: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	o := outputs(t, out)
	if o["base"] != p.base || o["head"] != p.head {
		t.Errorf("GITHUB_OUTPUT base=%s head=%s, want %s and %s", o["base"], o["head"], p.base, p.head)
	}
	if !strings.Contains(r.stdout, "PERFBOT_BASE="+p.base+"\n") {
		t.Errorf("stdout %q: want PERFBOT_BASE=%s", r.stdout, p.base)
	}
	if r := sh(t, p.clone, "git cat-file -e "+p.base+"^{commit}", baseEnv(t)); r.code != 0 {
		t.Errorf("the base commit is still missing from the clone")
	}
}

// TestRevsFallbacks: without an event payload the base is GitLab's diff
// base, or the merge base with origin/$GITHUB_BASE_REF; nothing at all is
// exit 2 naming what to set; an unknown commit is exit 2 naming it.
func TestRevsFallbacks(t *testing.T) {
	p := newPR(t, map[string]string{"a.txt": "one\n"}, map[string]string{"a.txt": "two\n"})
	run := func(extra map[string]string) result {
		env := baseEnv(t)
		for k, v := range extra {
			env[k] = v
		}
		return sh(t, p.clone, `sh ci/perfbot/revs.sh`, env)
	}
	r := run(map[string]string{"CI_MERGE_REQUEST_DIFF_BASE_SHA": p.base, "CI_COMMIT_SHA": p.head})
	if r.code != 0 || r.stdout != "PERFBOT_BASE="+p.base+"\nPERFBOT_HEAD="+p.head+"\n" {
		t.Errorf("GitLab: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// The work tree's HEAD is the head; origin/main's tip is head too, so
	// the merge base is head itself (a pull request with nothing new).
	r = run(map[string]string{"GITHUB_BASE_REF": "main"})
	if r.code != 0 || !strings.Contains(r.stdout, "PERFBOT_BASE="+p.head) {
		t.Errorf("GITHUB_BASE_REF: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = run(nil)
	if r.code != 2 || !strings.Contains(r.stderr, "no base commit: set PERFBOT_BASE") {
		t.Errorf("nothing set: exit %d, stderr %q; want 2 and what to set", r.code, r.stderr)
	}
	missing := strings.Repeat("ab", 20)
	r = run(map[string]string{"PERFBOT_BASE": missing})
	if r.code != 2 || !strings.Contains(r.stderr, "base commit "+missing+": not in this clone") {
		t.Errorf("unknown base: exit %d, stderr %q; want 2 naming it", r.code, r.stderr)
	}
}
