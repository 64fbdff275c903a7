package sim

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/testutil"
)

// history is a real git repository of a linear history, with the job
// file beside it.
type history struct {
	dir     string // holds repo/ and job.yaml
	repo    *gitrev.Repo
	commits []string // oldest first
	job     *job.Job
}

// newHistory commits n commits after a first one (the good end) in one
// git fast-import.
func newHistory(t *testing.T, n int) *history {
	t.Helper()
	g := testutil.NewGitRepo(t)
	var s strings.Builder
	for i := 0; i <= n; i++ {
		msg := fmt.Sprintf("commit %d", i)
		src := fmt.Sprintf("int f(void) { return %d; }\n", i)
		fmt.Fprintf(&s, "commit refs/heads/main\nmark :%d\ncommitter perfbot test <test@perfbot.invalid> %d +0000\ndata %d\n%s\n",
			i+1, 1700000000+60*i, len(msg), msg)
		if i > 0 {
			fmt.Fprintf(&s, "from :%d\n", i)
		}
		fmt.Fprintf(&s, "M 644 inline kernel/f.c\ndata %d\n%s\n", len(src), src)
	}
	gitIn(t, g.Dir, s.String(), "fast-import", "--quiet")
	g.Git("reset", "-q", "--hard", "main")
	h := &history{dir: filepath.Dir(g.Dir), commits: strings.Fields(g.Git("rev-list", "--reverse", "main"))}
	if len(h.commits) != n+1 {
		t.Fatalf("fast-import made %d commits, want %d", len(h.commits), n+1)
	}
	var err error
	if h.repo, err = gitrev.Open(context.Background(), g.Dir); err != nil {
		t.Fatal(err)
	}
	jobs, err := job.Parse(filepath.Join(h.dir, "job.yaml"), []byte(`name: kernel-like
repo: repo
build:
  command: make -j vmlinux
  artifacts: [vmlinux]
run:
  command: ./run-benchmark
runs: 10
metrics:
  - {name: t_s, regex: 't_s: (?P<value>[0-9.]+)', unit: s, better: lower}
`))
	if err != nil {
		t.Fatal(err)
	}
	h.job = jobs[0]
	return h
}

// gitIn runs git in dir with stdin, as testutil.Git runs it.
func gitIn(t *testing.T, dir, stdin string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
}
