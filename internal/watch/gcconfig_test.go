package watch

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGCConfig: the daemon's watch file fields, their defaults, and bad
// values refused with their line.
func TestGCConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "watch.yaml")
	write(t, filepath.Join(dir, "bench.yaml"), "repo: .\nbuild: {command: make}\nrun: {command: ./bench}\nmetrics: [{name: t, regex: 't: (?P<value>[0-9.]+)'}]\n")
	parse := func(extra string) (*Config, error) {
		return Parse(path, []byte("jobs: [bench.yaml]\n"+extra))
	}
	c, err := parse("")
	if err != nil {
		t.Fatal(err)
	}
	if c.GC.MaxBytes != 20<<30 || c.GC.MaxAge != 168*time.Hour || c.NoticeAfter != 3 {
		t.Errorf("defaults: gc %+v, notice_after %d", c.GC, c.NoticeAfter)
	}
	for extra, want := range map[string][2]int64{
		"gc: {max_size: 500MB, max_age: 1h}\n": {500e6, int64(time.Hour)},
		"gc: {max_size: 1.5GiB}\n":             {3 << 29, int64(168 * time.Hour)},
		"gc: {max_size: 0, max_age: 0}\n":      {0, 0},
		"gc: off\n":                            {0, 0},
		"gc: {max_size: 4096}\n":               {4096, int64(168 * time.Hour)},
	} {
		c, err := parse(extra)
		if err != nil {
			t.Errorf("%q: %v", extra, err)
			continue
		}
		if c.GC.MaxBytes != want[0] || int64(c.GC.MaxAge) != want[1] {
			t.Errorf("%q: gc %+v, want %v", extra, c.GC, want)
		}
	}
	if c, _ := parse("notice_after: 1\n"); c == nil || c.NoticeAfter != 1 {
		t.Errorf("notice_after: 1 not read: %+v", c)
	}
	for extra, want := range map[string]string{
		"gc: {max_size: lots}\n": `watch.yaml:2: gc.max_size: want a size such as 20GiB`,
		"gc: {max_size: -1GB}\n": `gc.max_size: want a size`,
		"gc: {max_age: soon}\n":  `gc.max_age: want a positive duration`,
		"gc: {keep: 3}\n":        `gc.keep`,
		"notice_after: 0\n":      `notice_after: want at least 1`,
		"notice_after: many\n":   `notice_after`,
	} {
		_, err := parse(extra)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one with %q", extra, err, want)
		}
	}
}
