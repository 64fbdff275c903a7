package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/suite"
)

func TestInit(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "src", "redis")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "jobs", "redis.yaml")
	code, _, errOut := perfbot(t, "init", "--suite", "redis", "--repo", repo, "--build", "make -j8", "--runs", "8", "-o", out,
		"server=./src/redis-server", "tests=set,get,lpush")
	if code != exitOK {
		t.Fatalf("init: exit %d\n%s", code, errOut)
	}
	jobs, err := job.Load(out)
	if err != nil {
		t.Fatalf("the written job: %v", err)
	}
	j := jobs[0]
	data, _ := os.ReadFile(out)
	if j.Repo != repo || j.Build.Command != "make -j8" || j.Runs != 8 || j.Suite == nil || j.Suite.Options["server"] != "./src/redis-server" ||
		j.Metrics[0].Name != "redis.set_total_throughput_rps" || !strings.Contains(string(data), "repo: "+repo+"\n") {
		t.Errorf("job repo %s runs %d build %q suite %v metric %s from:\n%s", j.Repo, j.Runs, j.Build.Command, j.Suite != nil, j.Metrics[0].Name, data)
	}
	// Every option is in the file, with its doc.
	s, _ := suite.Lookup("redis")
	for _, o := range s.Options {
		if !strings.Contains(string(data), o.Name+":") || !strings.Contains(string(data), o.Doc) {
			t.Errorf("the file lacks option %s or its doc:\n%s", o.Name, data)
		}
	}
	code, _, errOut = perfbot(t, "init", "--suite", "redis", "--repo", repo, "-o", out)
	if code != exitError || !strings.Contains(errOut, "exists: give --force") {
		t.Errorf("init over an existing file: exit %d, %s", code, errOut)
	}

	// Every suite's file, with its defaults, reads back as its job.
	for _, name := range suite.Names() {
		args := []string{"init", "--suite", name, "--build", "make"}
		switch name {
		case "gbench":
			args = append(args, "binary=./bench")
		case "hyperfine":
			args = append(args, "command=./tool --check")
		}
		code, stdout, errOut := perfbot(t, args...)
		jobs, err := job.Parse("job.yaml", []byte(stdout))
		if code != exitOK || err != nil || jobs[0].Suite == nil || jobs[0].Suite.Suite != name {
			t.Errorf("init --suite %s: exit %d, %v\n%s%s", name, code, err, errOut, stdout)
		}
	}

	// To stdout, with the repository as given.
	code, stdout, _ := perfbot(t, "init", "--suite", "sysbench", "test=memory", "threads=2")
	if _, err := job.Parse("job.yaml", []byte(stdout)); code != exitOK || err != nil || !strings.Contains(stdout, "test: memory") {
		t.Errorf("init to stdout: exit %d, %v:\n%s", code, err, stdout)
	}
}

// TestInitRepo: a relative --repo is written relative to the job file.
func TestInitRepo(t *testing.T) {
	for _, tc := range [][3]string{
		{"src/redis", "jobs/redis.yaml", "../src/redis"},
		{".", "redis.yaml", "."},
		{"../x", "", "../x"},
		{"/abs/x", "jobs/y.yaml", "/abs/x"},
	} {
		if got, err := jobRepo(tc[0], tc[1]); err != nil || got != tc[2] {
			t.Errorf("jobRepo(%q, %q) = %q, %v; want %q", tc[0], tc[1], got, err, tc[2])
		}
	}
}

func TestInitListAndErrors(t *testing.T) {
	code, stdout, _ := perfbot(t, "init", "--list")
	for _, name := range suite.Names() {
		if code != exitOK || !strings.Contains(stdout, "\n"+name+": ") && !strings.HasPrefix(stdout, name+": ") {
			t.Errorf("init --list lacks %s:\n%s", name, stdout)
		}
	}
	code, stdout, _ = perfbot(t, "init", "--list", "--suite", "fio")
	if code != exitOK || !strings.HasPrefix(stdout, "fio: ") || !strings.Contains(stdout, "  rw (default randread): ") || strings.Contains(stdout, "hackbench") {
		t.Errorf("init --list --suite fio:\n%s", stdout)
	}
	code, stdout, _ = perfbot(t, "init", "--suite", "stress-ng", "--command", "stressor=futex")
	if code != exitOK || !strings.HasPrefix(stdout, "command -v stress-ng") || !strings.Contains(stdout, "stress-ng --futex 1 --futex-ops 20000") {
		t.Errorf("init --command:\n%s", stdout)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--suite", "stressng"}, `--suite "stressng": no such suite; perfbot has stress-ng`},
		{[]string{"--suite", "stress-ng", "stressor"}, `"stressor": want OPTION=VALUE`},
		{[]string{"--suite", "stress-ng", "stresor=cpu"}, "suite stress-ng: stresor: unknown option"},
		{[]string{"--suite", "gbench", "binary=./bench"}, "runs ./bench, which the job's build makes: give the build command that makes it (perfbot init --build)"},
	} {
		code, _, errOut := perfbot(t, append([]string{"init"}, tc.args...)...)
		if code != exitError || !strings.Contains(errOut, tc.want) {
			t.Errorf("init %v: exit %d, %q; want %q", tc.args, code, errOut, tc.want)
		}
	}
	// A missing program is a warning, naming the package.
	t.Setenv("PATH", t.TempDir())
	code, _, errOut := perfbot(t, "init", "--suite", "hackbench")
	if code != exitOK || !strings.Contains(errOut, "warning: suite hackbench: hackbench is not installed (not on PATH): install the Debian package rt-tests") {
		t.Errorf("init without hackbench: exit %d, %s", code, errOut)
	}
}
