package sensitivity

import (
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
)

func TestCheck(t *testing.T) {
	jobs, err := job.Parse("/x/job.yaml", []byte("repo: .\nbuild: {command: \"true\"}\nrun: {command: \"true\"}\nmetrics: [{name: t, regex: 't: (?P<value>[0-9.]+)', better: lower}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	ok := Config{Job: jobs[0], Rev: "HEAD"}
	for _, c := range []struct {
		name string
		cfg  func(Config) Config
		want string
	}{
		{"ok", func(c Config) Config { return c }, ""},
		{"no revision", func(c Config) Config { c.Rev = ""; return c }, "no revision"},
		{"--runs 2", func(c Config) Config { c.Runs = 2; return c }, "--runs 2: need at least 3 runs of each build"},
		{"--layouts -1", func(c Config) Config { c.Layouts = -1; return c }, "--layouts -1"},
		{"--alpha 1", func(c Config) Config { c.Alpha = 1; return c }, "--alpha 1: want a level between 0 and 1"},
		{"--cpu", func(c Config) Config { c.Env = measure.Env{CPU: "x"}; return c }, `--cpu "x"`},
	} {
		err := c.cfg(ok).Check()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: Check() = %v, want %q", c.name, err, c.want)
		}
	}
	if got := ok.layouts(); got != DefaultLayouts {
		t.Errorf("layouts() = %d, want the default %d", got, DefaultLayouts)
	}
	if got := ok.runs(); got != jobs[0].Runs {
		t.Errorf("runs() = %d, want the job's %d", got, jobs[0].Runs)
	}
}
