package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHelpEveryCommand: every command of perfbot, sub-commands included,
// has a short help line and a long help that ends with its exit statuses.
func TestHelpEveryCommand(t *testing.T) {
	var walk func(c *cobra.Command)
	seen := map[string]bool{}
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		seen[c.CommandPath()] = true
		if strings.TrimSpace(c.Short) == "" {
			t.Errorf("%q has no short help", c.CommandPath())
		}
		long := strings.TrimSpace(c.Long)
		i := strings.LastIndex(long, "Exit status")
		if i < 0 || strings.Contains(long[i:], "\n\n") {
			t.Errorf("%q: its long help does not end with an \"Exit status: ...\" paragraph", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&app{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}))
	for _, want := range []string{"perfbot", "perfbot layout diff", "perfbot submit compare", "perfbot submit bisect", "perfbot version", "perfbot findings"} {
		if !seen[want] {
			t.Errorf("the walk missed %q (walked %d commands)", want, len(seen))
		}
	}
}

// TestVersion: perfbot version and perfbot --version print the build's
// version, and a test binary (like go run) has no revision stamped: they
// say so.
func TestVersion(t *testing.T) {
	code, out, stderr := runPerfbot("version")
	if code != exitOK || !strings.HasPrefix(out, "perfbot devel\n") || !strings.Contains(out, "revision: none stamped") {
		t.Errorf("perfbot version: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	code, out2, _ := runPerfbot("--version")
	if code != exitOK || out2 != out {
		t.Errorf("perfbot --version: exit %d, %q; want what perfbot version prints, %q", code, out2, out)
	}
	if code, _, stderr := runPerfbot("version", "extra"); code != exitError || !strings.Contains(stderr, "unknown command") && !strings.Contains(stderr, "accepts 0 arg") {
		t.Errorf("perfbot version extra: exit %d, stderr %q; want exit 2", code, stderr)
	}
}

// TestGroupCommandsRefuse: layout and submit only group sub-commands; a
// missing or unknown one is an error (exit 2) naming the valid ones, as
// their help says, not the help and exit 0.
func TestGroupCommandsRefuse(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"layout"}, "layout: name a sub-command: diff"},
		{[]string{"layout", "dif"}, `layout: unknown sub-command "dif": want diff`},
		{[]string{"submit", "triag"}, `submit: unknown sub-command "triag": want bisect, compare, sensitivity, triage, watch`},
	} {
		code, _, stderr := runPerfbot(c.args...)
		if code != exitError || !strings.Contains(stderr, c.want) {
			t.Errorf("perfbot %s: exit %d, stderr %q; want 2 and %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
}
