package testutil

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GitRepo is a scratch git repository that a test commits files into.
type GitRepo struct {
	// Dir is the repository's work tree.
	Dir string
	tb  testing.TB
}

// NewGitRepo creates an empty repository with branch main and a local
// identity. Its Dir is a folder named repo in a fresh temporary folder
// (removed when the test ends), so that a test can put a job file and its
// store beside it (filepath.Dir(r.Dir)). It skips the test when git is
// missing (fails in strict mode, see [NeedTool]).
func NewGitRepo(tb testing.TB) *GitRepo {
	tb.Helper()
	NeedTool(tb, "git")
	r := &GitRepo{Dir: filepath.Join(tb.TempDir(), "repo"), tb: tb}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	r.Git("init", "-q", "-b", "main")
	r.Git("config", "user.name", "perfbot test")
	r.Git("config", "user.email", "test@perfbot.invalid")
	r.Git("config", "commit.gpgsign", "false")
	return r
}

// Commit writes files (slash-separated path relative to Dir -> content),
// commits every change in the work tree with message msg and returns the
// new commit's full hash.
func (r *GitRepo) Commit(msg string, files map[string]string) string {
	r.tb.Helper()
	for p, content := range files {
		full := filepath.Join(r.Dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			r.tb.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			r.tb.Fatal(err)
		}
	}
	r.Git("add", "-A")
	r.Git("commit", "-q", "--allow-empty", "-m", msg)
	return r.Git("rev-parse", "HEAD")
}

// Git runs git with args in the repository and returns its output, trimmed;
// an error fails the test.
func (r *GitRepo) Git(args ...string) string {
	r.tb.Helper()
	return Git(r.tb, r.Dir, args...)
}

// Git runs git with args in dir and returns its standard output, trimmed;
// an error fails the test with git's output. git runs without the system
// and global configuration and without the caller's GIT_* variables (a
// hook's GIT_DIR would redirect it), so that the result is the same on
// every machine.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("git %s in %s: %v\n%s%s", strings.Join(args, " "), dir, err, stdout.Bytes(), stderr.Bytes())
	}
	return strings.TrimSpace(stdout.String())
}
