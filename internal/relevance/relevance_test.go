package relevance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(gitrev.Env(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func commit(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "c")
	return git(t, dir, "rev-parse", "HEAD")
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	c0 := commit(t, dir, map[string]string{"main.c": "int main(){}", "README.md": "a"})
	c1 := commit(t, dir, map[string]string{"README.md": "b", "docs/deep/x.md": "x", "docs/img.png": "p"})
	c2 := commit(t, dir, map[string]string{"src/main.md.c": "int x;"})
	c3 := commit(t, dir, nil)
	repo := &gitrev.Repo{Dir: dir}
	j := &job.Job{Name: "j", Ignore: []string{"docs/**", "*.md"}}
	ctx := context.Background()
	for _, tc := range []struct {
		a, b       string
		irrelevant bool
		relevant   []string
	}{
		{c0, c1, true, nil},
		{c1, c2, false, []string{"src/main.md.c"}},
		{c0, c2, false, []string{"src/main.md.c"}},
		{c2, c3, true, nil}, // no file changed
	} {
		r, err := Check(ctx, repo, j, tc.a, tc.b)
		if err != nil {
			t.Fatal(err)
		}
		if r.Irrelevant() != tc.irrelevant || strings.Join(r.Relevant, ",") != strings.Join(tc.relevant, ",") {
			t.Errorf("%s..%s: irrelevant %v relevant %q, want %v %q (changed %q)", tc.a[:7], tc.b[:7], r.Irrelevant(), r.Relevant, tc.irrelevant, tc.relevant, r.Changed)
		}
		if r.Irrelevant() && r.Reason() == "" {
			t.Errorf("%s..%s: no reason", tc.a[:7], tc.b[:7])
		}
	}
	// Without globs every change counts, and git is not asked.
	r, err := Check(ctx, repo, &job.Job{Name: "j"}, c0, c1)
	if err != nil || r.Irrelevant() {
		t.Errorf("no globs: irrelevant %v, %v", r.Irrelevant(), err)
	}
	if _, err := Check(ctx, repo, j, c0, "nosuchrev"); err == nil || !strings.Contains(err.Error(), "relevance") {
		t.Errorf("unknown revision: %v", err)
	}
}
