package suite

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// minimal gives each suite the options it requires.
var minimal = map[string]map[string]string{
	"gbench":    {"binary": "./bench"},
	"hyperfine": {"command": "sleep 0.01"},
}

func TestSuitesExpand(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range All() {
		if seen[s.Name] || s.Summary == "" {
			t.Errorf("suite %q: a duplicate name or no summary", s.Name)
		}
		seen[s.Name] = true
		for _, o := range s.Options {
			if o.Doc == "" {
				t.Errorf("suite %s: option %s has no doc", s.Name, o.Name)
			}
		}
		u, err := s.Expand(minimal[s.Name])
		if err != nil {
			t.Errorf("suite %s with its defaults: %v", s.Name, err)
			continue
		}
		if u.Suite != s.Name || len(u.Options) != len(s.Options) || len(u.Metrics) == 0 || len(u.Programs) == 0 {
			t.Errorf("suite %s: %+v", s.Name, u)
		}
		if !strings.HasPrefix(u.Command, "command -v ") {
			t.Errorf("suite %s: the command does not start by checking its program:\n%s", s.Name, u.Command)
		}
		for _, m := range u.Metrics {
			if err := m.Validate(); err != nil {
				t.Errorf("suite %s: %v", s.Name, err)
			}
		}
		if out, err := exec.Command("sh", "-n", "-c", u.Command).CombinedOutput(); err != nil {
			t.Errorf("suite %s: sh -n: %v\n%s\n%s", s.Name, err, out, u.Command)
		}
	}
	// The suites with a key metric name it first, as lkp does.
	for suite, key := range map[string]string{
		"stress-ng": "stress-ng.mutex.ops_per_sec", "hackbench": "hackbench.throughput", "fio": "fio.read_bw_MBps",
		"sysbench": "sysbench-cpu.throughput_events/s", "redis": "redis.set_total_throughput_rps", "hyperfine": "hyperfine.sleep_0.01.mean",
	} {
		u := expand(t, suite, minimal[suite])
		if u.Metrics[0].Name != key {
			t.Errorf("suite %s: first metric %q, want %q", suite, u.Metrics[0].Name, key)
		}
		if n := len(u.Metrics); n > 1 && u.Metrics[n-1].Name == "" && !contains(u.Metrics[n-1].Exclude, key) {
			t.Errorf("suite %s: the family does not leave out %s: %v", suite, key, u.Metrics[n-1].Exclude)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestExpandErrors(t *testing.T) {
	for _, tc := range []struct {
		suite   string
		options map[string]string
		option  string
		msg     string
	}{
		{"stres-ng", nil, "", "no such suite (perfbot has stress-ng, hackbench"},
		{"stress-ng", map[string]string{"stresor": "mutex"}, "stresor", "unknown option (stress-ng takes stressor, instances"},
		{"stress-ng", map[string]string{"stressor": "Mutex; rm -rf /"}, "stressor", "want a stressor name"},
		{"stress-ng", map[string]string{"ops": "0"}, "ops", "needs a timeout"},
		{"stress-ng", map[string]string{"ops": "-1"}, "ops", "want a whole number of at least 0"},
		{"hackbench", map[string]string{"mode": "thread"}, "mode", "want one of process, threads"},
		{"fio", map[string]string{"jobfile": "x.fio", "rw": "read"}, "rw", "the job file x.fio sets it"},
		{"fio", map[string]string{"bs": "4 k"}, "bs", "want a size"},
		{"sysbench", map[string]string{"test": "memory", "cpu_max_prime": "100"}, "cpu_max_prime", "sysbench's cpu test, and this job runs its memory test"},
		{"sysbench", map[string]string{"time": "0"}, "time", "for ever"},
		{"redis", map[string]string{"tests": "set get"}, "tests", "comma-separated"},
		{"gbench", nil, "binary", "required"},
		{"hyperfine", map[string]string{"command": " "}, "command", "required"},
		{"criterion", map[string]string{"sample_size": "5"}, "sample_size", "at least 10"},
		{"gobench", map[string]string{"binary": "./x.test", "package": "./..."}, "binary", "leave package and go out"},
	} {
		_, err := Expand(tc.suite, tc.options)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Option != tc.option || !strings.Contains(oe.Msg, tc.msg) {
			t.Errorf("Expand(%s, %v) = %v; want option %q: %q", tc.suite, tc.options, err, tc.option, tc.msg)
		}
	}
}

func TestMissingProgram(t *testing.T) {
	u := expand(t, "redis", nil)
	err := u.Missing(t.TempDir())
	for _, want := range []string{"redis-server is not installed", "Debian package redis-server", "redis-benchmark is not installed", "Debian package redis-tools"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Missing: %v; want %q", err, want)
		}
	}
	// A program the build makes is the run's to check.
	u = expand(t, "stress-ng", map[string]string{"program": "./stress-ng"})
	if err := u.Missing(t.TempDir()); err != nil {
		t.Errorf("Missing with program ./stress-ng: %v, want nil (the build makes it)", err)
	}

	// The run command checks too: exit 127 and a line naming the package.
	for _, tc := range []struct {
		u    *Use
		want string
	}{
		{expand(t, "hackbench", nil), "hackbench is not installed (not on PATH): install the Debian package rt-tests (apt-get install rt-tests)"},
		{u, "./stress-ng is not an executable file in the worktree: the job's build.command should make it"},
	} {
		cmd := exec.Command("sh", "-c", tc.u.Command)
		cmd.Dir = t.TempDir()
		cmd.Env = []string{"PATH=" + t.TempDir()}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 127 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("run without the program: %v, stderr %q; want exit 127 and %q", err, stderr.String(), tc.want)
		}
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"mutex": "mutex", "./src/redis-server": "./src/redis-server", "a b": "'a b'", "it's": `'it'\''s'`, "": "''", "$HOME": "'$HOME'",
	} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
	// A value with shell syntax stands for itself.
	u := expand(t, "hyperfine", map[string]string{"command": "echo '$HOME'; touch x", "name_as": "a b"})
	if !strings.Contains(u.Command, `-- 'echo '\''$HOME'\''; touch x'`) || !strings.Contains(u.Command, `--command-name 'a b'`) {
		t.Errorf("quoting:\n%s", u.Command)
	}
	if u.Metrics[0].Name != "hyperfine.a_b.mean" {
		t.Errorf("key metric %s", u.Metrics[0].Name)
	}
}
