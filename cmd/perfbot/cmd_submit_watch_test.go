package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSubmitWatchFlags: the fleet's watch commands refuse what they
// cannot run, before they reach a database: submit watch without --once
// (perfbot serve --watch watches without end), a job file without a
// class, and serve --watch without --db.
func TestSubmitWatchFlags(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte("repo: .\nbuild: {command: make}\nrun: {command: ./bench}\nmetrics: [{name: t, regex: 't: (?P<value>[0-9.]+)'}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	watchFile := filepath.Join(dir, "watch.yaml")
	if err := os.WriteFile(watchFile, []byte("jobs: [bench.yaml]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"submit", "watch", "--db", "postgres://nowhere.invalid/x", watchFile}, "give --once"},
		{[]string{"submit", "watch", "--db", "postgres://nowhere.invalid/x", watchFile, "--once"}, "--class: required: the watch file gives " + filepath.Join(dir, "bench.yaml") + " no class:"},
		{[]string{"serve", "--watch", watchFile, "--store", dir}, "--watch: needs --db URL"},
		{[]string{"submit", "sensitivity", "--db", "postgres://nowhere.invalid/x", "--class", "c", filepath.Join(dir, "bench.yaml"), "HEAD", "-f", "svg"}, `"svg"`},
	} {
		var stdout, stderr lockedBuffer
		code := run(context.Background(), &stdout, &stderr, c.args)
		if code != exitError || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("perfbot %s: exit %d, stderr %q; want 2 and %q", strings.Join(c.args, " "), code, stderr.String(), c.want)
		}
	}
}
