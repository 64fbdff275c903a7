package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/watch"
)

// TestDemoWatchRecipe: perfbot demo --history watch creates the history
// and prints a recipe whose every line works: the printf writes a watch
// file that perfbot reads, each git line moves the branch to a commit of
// the history, and each perfbot line names a real command and its flags.
// (The cycles themselves are TestWatchFigures'.)
func TestDemoWatchRecipe(t *testing.T) {
	testutil.NeedTool(t, "git")
	dir := t.TempDir()
	code, out, errOut := perfbot(t, "demo", "--history", "watch", "--dir", dir)
	if code != 0 {
		t.Fatalf("demo --history watch: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"data-alignment", "text-alignment", "real-regression", "build-failure"} {
		if !strings.Contains(out, want) {
			t.Errorf("the listing lacks the %s commit:\n%s", want, out)
		}
	}
	root := newRootCmd(&app{})
	var gits, perfbots int
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		for _, part := range strings.Split(line, " && ") {
			f := strings.Fields(part)
			switch {
			case strings.HasPrefix(part, "printf "), strings.HasPrefix(part, "git "):
				if f[0] == "git" {
					gits++
				}
				if b, err := exec.Command("sh", "-c", part).CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", part, err, b)
				}
			case strings.HasPrefix(part, "perfbot "):
				perfbots++
				cmd, rest, err := root.Find(f[1:])
				if err != nil || cmd == root {
					t.Errorf("%q names no perfbot command", part)
					continue
				}
				for _, a := range rest {
					if strings.HasPrefix(a, "--") && cmd.Flags().Lookup(strings.TrimPrefix(a, "--")) == nil {
						t.Errorf("%q: %s has no flag %s", part, cmd.CommandPath(), a)
					}
				}
			}
		}
	}
	if gits != 5 || perfbots < 7 {
		t.Fatalf("the recipe has %d git and %d perfbot commands:\n%s", gits, perfbots, out)
	}
	cfg, err := watch.Load(filepath.Join(dir, "watch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Jobs) != 1 || cfg.Jobs[0].File != filepath.Join(dir, "kvstore", "perfbot.yaml") || cfg.Branches[0] != "watched" || cfg.Test.Every != 4 {
		t.Errorf("the recipe's watch file: %+v", cfg)
	}
}

// TestIndent: the calibration's lines are indented under the demo's own,
// however they arrive.
func TestIndent(t *testing.T) {
	var b strings.Builder
	w := indent{&b}
	for _, p := range []string{"one\n", "two\nthree\n"} {
		if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if got, want := b.String(), "  one\n  two\n  three\n"; got != want {
		t.Errorf("indented %q, want %q", got, want)
	}
}
