package watch

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestClassConfig: a fleet's machine class, per job file or for the whole
// watch file (the default of the job files that name none, wherever it
// stands in the file), and a class that is not a queue name refused with
// its line.
func TestClassConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "watch.yaml")
	for _, f := range []string{"a.yaml", "b.yaml"} {
		write(t, filepath.Join(dir, f), "repo: .\nbuild: {command: make}\nrun: {command: ./bench}\nmetrics: [{name: t, regex: 't: (?P<value>[0-9.]+)'}]\n")
	}
	c, err := Parse(path, []byte("jobs: [a.yaml, {file: b.yaml, class: arm-64}]\nclass: x86\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Class != "x86" || c.Jobs[0].Class != "x86" || c.Jobs[1].Class != "arm-64" {
		t.Errorf("classes: file %q, jobs %q %q; want x86, x86, arm-64", c.Class, c.Jobs[0].Class, c.Jobs[1].Class)
	}
	if c, err := Parse(path, []byte("jobs: [a.yaml]\n")); err != nil || c.Jobs[0].Class != "" {
		t.Errorf("no class: %v, %q; want none (the server's --class)", err, c.Jobs[0].Class)
	}
	_, err = Parse(path, []byte("jobs: [a.yaml]\nclass: Big Box\n"))
	if err == nil || !strings.Contains(err.Error(), `watch.yaml:2: class: want a machine class`) || !strings.Contains(err.Error(), `"Big Box"`) {
		t.Errorf("a bad class: %v", err)
	}
}
