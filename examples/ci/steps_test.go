package ci

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// scripts are the shell steps the recipes share; a test repository gets
// them where the recipes expect them (PERFBOT_CI: ci/perfbot).
var scripts = []string{"revs.sh", "gate.sh", "publish.sh"}

// pr is a pull request in a scratch origin repository and its clone, as
// CI checks it out: shallow, HEAD at the head commit, the base missing.
type pr struct {
	origin     *testutil.GitRepo
	clone      string // the CI's work tree
	base, head string
}

// newPR commits the scripts, job and files of base, then head's changes,
// and clones head with depth 1.
func newPR(t *testing.T, base, head map[string]string) *pr {
	t.Helper()
	testutil.NeedTool(t, "git", "sh", "jq", "curl")
	o := testutil.NewGitRepo(t)
	files := map[string]string{}
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		files["ci/perfbot/"+s] = string(b)
	}
	for k, v := range base {
		files[k] = v
	}
	p := &pr{origin: o}
	p.base = o.Commit("base", files)
	p.head = o.Commit("head", head)
	p.clone = filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", "--depth", "1", "file://"+o.Dir, p.clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	return p
}

// event writes a pull_request event payload and returns its path.
func (p *pr) event(t *testing.T, number int) string {
	t.Helper()
	ev := map[string]any{"number": number, "pull_request": map[string]any{
		"number": number,
		"base":   map[string]any{"sha": p.base, "ref": "main"},
		"head":   map[string]any{"sha": p.head, "ref": "change"},
	}}
	b, _ := json.Marshal(ev)
	path := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// result is one shell step's.
type result struct {
	code           int
	stdout, stderr string
}

// sh runs script as GitHub runs a run: step on Linux (bash -eo pipefail)
// in dir with exactly env.
func sh(t *testing.T, dir, script string, env map[string]string) result {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
	cmd.Dir = dir
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var x *exec.ExitError
	if err != nil && !errors.As(err, &x) {
		t.Fatalf("bash: %v", err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: o.String(), stderr: e.String()}
}

// baseEnv is a bare environment: PATH, HOME, and git's identity off.
func baseEnv(t *testing.T, path ...string) map[string]string {
	return map[string]string{
		"PATH":                strings.Join(append(path, os.Getenv("PATH")), ":"),
		"HOME":                t.TempDir(),
		"GIT_CONFIG_NOSYSTEM": "1",
	}
}

// outputs reads a $GITHUB_OUTPUT file (key=value lines).
func outputs(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}

// forge is a local HTTP server with the few endpoints of GitHub's and
// GitLab's APIs that publish.sh calls, keeping comments as they do.
type forge struct {
	*httptest.Server
	mu       sync.Mutex
	comments map[int]string // id -> body
	checks   []map[string]any
	requests []string // "METHOD path"
	token    string
}

func newForge(t *testing.T, token string) *forge {
	f := &forge{comments: map[int]string{}, token: token}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

var (
	ghList   = regexp.MustCompile(`^/repos/o/r/issues/(\d+)/comments$`)
	ghEdit   = regexp.MustCompile(`^/repos/o/r/issues/comments/(\d+)$`)
	glNotes  = regexp.MustCompile(`^/api/v4/projects/42/merge_requests/(\d+)/notes$`)
	glEdit   = regexp.MustCompile(`^/api/v4/projects/42/merge_requests/\d+/notes/(\d+)$`)
	ghChecks = "/repos/o/r/check-runs"
)

func (f *forge) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Method+" "+r.URL.Path)
	if r.Header.Get("Authorization") != "Bearer "+f.token && r.Header.Get("PRIVATE-TOKEN") != f.token {
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		return
	}
	var body map[string]any
	if r.Method == http.MethodPost || r.Method == http.MethodPatch || r.Method == http.MethodPut {
		if r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&body) != nil {
			http.Error(w, `{"message":"Problems parsing JSON"}`, http.StatusBadRequest)
			return
		}
	}
	p := r.URL.Path
	switch {
	case (ghList.MatchString(p) || glNotes.MatchString(p)) && r.Method == http.MethodGet:
		var list []map[string]any
		for id := 1; id <= len(f.comments); id++ {
			list = append(list, map[string]any{"id": id, "body": f.comments[id]})
		}
		if list == nil {
			list = []map[string]any{}
		}
		json.NewEncoder(w).Encode(list)
	case (ghList.MatchString(p) || glNotes.MatchString(p)) && r.Method == http.MethodPost:
		id := len(f.comments) + 1
		f.comments[id] = fmt.Sprint(body["body"])
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"id": id})
	case ghEdit.MatchString(p) && r.Method == http.MethodPatch, glEdit.MatchString(p) && r.Method == http.MethodPut:
		m := ghEdit.FindStringSubmatch(p)
		if m == nil {
			m = glEdit.FindStringSubmatch(p)
		}
		var id int
		fmt.Sscan(m[1], &id)
		if _, ok := f.comments[id]; !ok {
			http.NotFound(w, r)
			return
		}
		f.comments[id] = fmt.Sprint(body["body"])
		json.NewEncoder(w).Encode(map[string]any{"id": id})
	case p == ghChecks && r.Method == http.MethodPost:
		f.checks = append(f.checks, body)
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"id": len(f.checks)})
	default:
		http.NotFound(w, r)
	}
}

// add puts a comment there before the test (another user's, or an old
// report).
func (f *forge) add(body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.comments[len(f.comments)+1] = body
}
