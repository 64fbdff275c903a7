package ci

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPublishGitHub runs the workflow's "Comment and check run" step
// twice against a local server with GitHub's comment and check-run
// endpoints: the first run comments, the second edits that comment (not
// another user's), and each outcome maps to its check run conclusion.
func TestPublishGitHub(t *testing.T) {
	p := newPR(t, map[string]string{"a.txt": "one\n"}, nil)
	dir := p.clone
	f := newForge(t, "tok")
	f.add("LGTM, but is it fast?")
	env := baseEnv(t)
	for k, v := range map[string]string{
		"PERFBOT_CI":        "ci/perfbot",
		"GITHUB_API_URL":    f.URL,
		"GITHUB_REPOSITORY": "o/r",
		"GITHUB_TOKEN":      "tok",
		"PERFBOT_PR":        "7",
		"PERFBOT_CHECK_SHA": p.head,
	} {
		env[k] = v
	}
	publish := publishStep(t)
	for i, c := range []struct{ outcome, conclusion string }{
		{"inconclusive", "neutral"}, {"pass", "success"}, {"regression", "failure"}, {"error", "failure"},
	} {
		report := "no regression: work_ms -0.3 % [-2.1 %, +0.5 %]; run " + c.outcome + "\n\n| metric |\n"
		write(t, filepath.Join(dir, "gate.md"), report)
		write(t, filepath.Join(dir, "gate.outcome"), c.outcome+"\n")
		r := sh(t, dir, publish, env)
		if r.code != 0 {
			t.Fatalf("%s: publish exit %d\n%s%s", c.outcome, r.code, r.stdout, r.stderr)
		}
		if len(f.comments) != 2 || f.comments[1] != "LGTM, but is it fast?" {
			t.Fatalf("after run %d: comments %v: want the other user's and one report", i+1, f.comments)
		}
		if want := "<!-- perfbot gate -->\n" + report; f.comments[2] != want {
			t.Errorf("%s: comment %q, want %q", c.outcome, f.comments[2], want)
		}
		chk := f.checks[len(f.checks)-1]
		if chk["conclusion"] != c.conclusion || chk["head_sha"] != p.head || chk["name"] != "perfbot gate" {
			t.Errorf("%s: check run %v, want conclusion %s on %s", c.outcome, chk, c.conclusion, p.head)
		}
		if title, _ := chk["output"].(map[string]any)["title"].(string); !strings.HasPrefix(title, "no regression: work_ms") {
			t.Errorf("%s: check run title %q, want the verdict line", c.outcome, title)
		}
	}
	// No token (what a fork's pull request gets): no comment, exit 0.
	delete(env, "GITHUB_TOKEN")
	n := len(f.requests)
	if r := sh(t, dir, publish, env); r.code != 0 || len(f.requests) != n || !strings.Contains(r.stdout, "no GITHUB_TOKEN") {
		t.Errorf("without a token: exit %d, %d requests, stdout %q", r.code, len(f.requests)-n, r.stdout)
	}
	// A refused token is an error, with the server's answer.
	env["GITHUB_TOKEN"] = "wrong"
	if r := sh(t, dir, publish, env); r.code != 2 || !strings.Contains(r.stderr, "Bad credentials") {
		t.Errorf("a refused token: exit %d, stderr %q; want 2 with the API's message", r.code, r.stderr)
	}
	// A fork's report, published by the follow-up workflow: a "pass" it
	// wrote itself is a neutral check run, and the comment says unverified.
	env["GITHUB_TOKEN"], env["PERFBOT_UNVERIFIED"] = "tok", "1"
	write(t, filepath.Join(dir, "gate.outcome"), "pass\n")
	if r := sh(t, dir, publish, env); r.code != 0 {
		t.Fatalf("unverified: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if chk := f.checks[len(f.checks)-1]; chk["conclusion"] != "neutral" {
		t.Errorf("unverified pass: check run %v, want neutral", chk)
	}
	if c := f.comments[2]; !strings.HasPrefix(c, "<!-- perfbot gate -->\n> Unverified:") {
		t.Errorf("unverified comment %q", c)
	}
	delete(env, "PERFBOT_UNVERIFIED")
	// A bad outcome file is an error naming it.
	env["GITHUB_TOKEN"] = "tok"
	write(t, filepath.Join(dir, "gate.outcome"), "green\n")
	if r := sh(t, dir, publish, env); r.code != 2 || !strings.Contains(r.stderr, `gate.outcome: outcome "green"`) {
		t.Errorf("outcome green: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestPublishGitLab runs the GitLab job's after_script twice against a
// local server with GitLab's merge request notes: one note, edited.
func TestPublishGitLab(t *testing.T) {
	p := newPR(t, map[string]string{"a.txt": "one\n"}, nil)
	j := loadGitLab(t)
	f := newForge(t, "gl-tok")
	env := gitlabEnv(t, j, p, f.URL)
	for _, run := range []string{"first", "second"} {
		write(t, filepath.Join(p.clone, "gate.md"), "no regression: "+run+"\n")
		write(t, filepath.Join(p.clone, "gate.outcome"), "pass\n")
		if r := sh(t, p.clone, strings.Join(j.AfterScript, "\n"), env); r.code != 0 {
			t.Fatalf("after_script: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if len(f.comments) != 1 || f.comments[1] != "<!-- perfbot gate -->\nno regression: "+run+"\n" {
			t.Errorf("%s run: notes %v: want one, the report", run, f.comments)
		}
	}
	if len(f.checks) != 0 {
		t.Errorf("GitLab: %d check runs posted", len(f.checks))
	}
}

// publishStep is the run: text of the gate workflow's publishing step.
func publishStep(t *testing.T) string {
	t.Helper()
	for _, s := range loadWorkflow(t, "github-actions.yml").Jobs["gate"].Steps {
		if strings.Contains(s.Run, "publish.sh") {
			return s.Run
		}
	}
	t.Fatal("github-actions.yml: no step runs publish.sh")
	return ""
}

// gitlabEnv is a merge request pipeline's environment for the job j in
// the clone of p, its variables expanded as GitLab does.
func gitlabEnv(t *testing.T, j gitlabJob, p *pr, api string) map[string]string {
	env := baseEnv(t)
	for k, v := range map[string]string{
		"CI":                                  "true",
		"CI_PIPELINE_SOURCE":                  "merge_request_event",
		"CI_PROJECT_DIR":                      p.clone,
		"CI_PROJECT_ID":                       "42",
		"CI_API_V4_URL":                       api + "/api/v4",
		"CI_MERGE_REQUEST_IID":                "3",
		"CI_MERGE_REQUEST_DIFF_BASE_SHA":      p.base,
		"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
		"CI_COMMIT_SHA":                       p.head,
		"PERFBOT_GITLAB_TOKEN":                "gl-tok",
	} {
		env[k] = v
	}
	for k, v := range j.Variables {
		env[k] = os.Expand(v, func(name string) string { return env[name] })
	}
	return env
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
