package main

import (
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestREADMECommands keeps the front door true: every "perfbot VERB ..."
// in the README's code blocks names a real command, and its flags exist.
func TestREADMECommands(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	root := newRootCmd(&app{stdout: io.Discard, stderr: io.Discard})
	inBlock := false
	re := regexp.MustCompile(`^(?:go run \./cmd/perfbot|perfbot)\s+(.*)$`)
	checked := 0
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		m := re.FindStringSubmatch(strings.TrimSpace(line))
		if !inBlock || m == nil {
			continue
		}
		args := strings.Fields(strings.SplitN(m[1], "#", 2)[0])
		cmd, rest, err := root.Find(args)
		if err != nil || cmd == root {
			t.Errorf("README: %q names no perfbot command", line)
			continue
		}
		for _, a := range rest {
			if !strings.HasPrefix(a, "--") {
				continue
			}
			name := strings.SplitN(strings.TrimPrefix(a, "--"), "=", 2)[0]
			if cmd.Flags().Lookup(name) == nil {
				t.Errorf("README: %q: %s has no flag --%s", line, cmd.CommandPath(), name)
			}
		}
		checked++
	}
	if checked < 3 {
		t.Errorf("checked only %d README command lines", checked)
	}
}
