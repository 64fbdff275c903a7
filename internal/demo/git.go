package demo

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// baseTime is the author and committer time of the first commit (2024-01-01
// 09:00 UTC); commit i is i hours later. Fixed times make the hashes
// deterministic.
const baseTime = 1704099600

// gitCmd runs git in one repository, isolated from the user's and the
// system's git configuration so that the result is the same everywhere.
type gitCmd struct {
	dir string
}

// env is the environment of every git command: the caller's, minus any
// GIT_* variable (a hook's GIT_DIR would redirect us), plus isolation.
func (g *gitCmd) env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_TERMINAL_PROMPT=0",
	)
	return append(env, extra...)
}

func (g *gitCmd) output(extraEnv []string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = g.dir
	cmd.Env = g.env(extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("demo: git %s in %s: %s", strings.Join(args, " "), g.dir, msg)
	}
	return stdout.String(), nil
}

func (g *gitCmd) run(args ...string) error {
	_, err := g.output(nil, args...)
	return err
}

// init creates the repository with branch main and a local identity.
func (g *gitCmd) init() error {
	if _, err := exec.LookPath("git"); err != nil {
		return fmt.Errorf("demo: the git command is needed: %v", err)
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.name", "perfbot demo"},
		{"config", "user.email", "demo@perfbot.invalid"},
		{"config", "commit.gpgsign", "false"},
		{"config", "core.autocrlf", "false"},
	} {
		if err := g.run(args...); err != nil {
			return err
		}
	}
	return nil
}

// identity is the author and committer of every commit.
const identity = "perfbot demo <demo@perfbot.invalid>"

// importCommit is one commit for fastImport.
type importCommit struct {
	ref     string // branch, e.g. refs/heads/main
	parent  int    // mark of the parent (1-based); 0 for none
	merge   int    // mark of a second parent (a merge); 0 for none
	message string
	files   map[string]string
}

// fastImport writes the commits with one "git fast-import" (commit i gets
// mark i+1 and the time baseTime + i hours) and returns their hashes.
func (g *gitCmd) fastImport(commits []importCommit) ([]string, error) {
	var in bytes.Buffer
	data := func(s string) { fmt.Fprintf(&in, "data %d\n%s\n", len(s), s) }
	for i, c := range commits {
		date := fmt.Sprintf("%d +0000", baseTime+3600*i)
		fmt.Fprintf(&in, "commit %s\nmark :%d\n", c.ref, i+1)
		fmt.Fprintf(&in, "author %s %s\ncommitter %s %s\n", identity, date, identity, date)
		data(c.message)
		if c.parent > 0 {
			fmt.Fprintf(&in, "from :%d\n", c.parent)
		}
		if c.merge > 0 {
			fmt.Fprintf(&in, "merge :%d\n", c.merge)
		}
		in.WriteString("deleteall\n")
		names := make([]string, 0, len(c.files))
		for name := range c.files {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			fmt.Fprintf(&in, "M 100644 inline %s\n", name)
			data(c.files[name])
		}
	}
	in.WriteString("done\n")
	marks := filepath.Join(g.dir, ".git", "demo-marks")
	cmd := exec.Command("git", "fast-import", "--quiet", "--done", "--export-marks="+marks)
	cmd.Dir = g.dir
	cmd.Env = g.env()
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("demo: git fast-import in %s: %v: %s", g.dir, err, strings.TrimSpace(stderr.String()))
	}
	out, err := os.ReadFile(marks)
	if err != nil {
		return nil, fmt.Errorf("demo: %v", err)
	}
	os.Remove(marks)
	hashes := make([]string, len(commits))
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var mark int
		var hash string
		if _, err := fmt.Sscanf(line, ":%d %s", &mark, &hash); err != nil || mark < 1 || mark > len(commits) {
			return nil, fmt.Errorf("demo: bad line %q in git fast-import's marks", line)
		}
		hashes[mark-1] = hash
	}
	for i, h := range hashes {
		if h == "" {
			return nil, fmt.Errorf("demo: git fast-import gave no hash for commit %d", i+1)
		}
	}
	return hashes, nil
}
