package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/suite"
)

func newInitCmd(a *app) *cobra.Command {
	var f struct {
		suite, repo, build, out string
		runs                    int
		list, force, command    bool
	}
	cmd := &cobra.Command{
		Use:   "init --suite NAME [--repo DIR] [--build CMD] [-o job.yaml] [OPTION=VALUE ...]",
		Short: "write a job file that runs a benchmark suite",
		Long: `init writes a ready job file that runs a benchmark suite (stress-ng, hackbench,
fio, sysbench, redis, gbench, hyperfine, pytest-benchmark, criterion, gobench)
on a repository: the suite supplies the run command and reads the metrics,
named as lkp-tests names them (stress-ng.mutex.ops_per_sec, hackbench.throughput,
fio.read_bw_MBps, ...); the build is the job's (--build). Options are given as
OPTION=VALUE; every option is written into the file with its default.

  perfbot init --list                       # the suites and their options
  perfbot init --suite stress-ng stressor=futex ops=50000 -o futex.yaml
  perfbot init --suite redis --repo ../redis --build 'make -j8' server=./src/redis-server
  perfbot init --suite stress-ng --command > run-stress-ng.sh   # the run command alone

A program the suite runs that is not installed gets a warning naming its
Debian package (and the job stops before building until it is installed).
See docs/suites.md.

Exit status: 0 the job file (or the list, or the command) was written, 2
error (an unknown suite or option, a file that exists).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.list || f.suite == "" {
				return listSuites(a.stdout, f.suite)
			}
			s, ok := suite.Lookup(f.suite)
			if !ok {
				return fmt.Errorf("--suite %q: no such suite; perfbot has %s", f.suite, strings.Join(suite.Names(), ", "))
			}
			opts := map[string]string{}
			for _, arg := range args {
				k, v, ok := strings.Cut(arg, "=")
				if !ok || k == "" {
					return fmt.Errorf("%q: want OPTION=VALUE (perfbot init --list --suite %s lists the options)", arg, s.Name)
				}
				opts[k] = v
			}
			if f.command {
				u, err := s.Expand(opts)
				if err != nil {
					return err
				}
				_, err = io.WriteString(a.stdout, u.Command)
				return err
			}
			repo, err := jobRepo(f.repo, f.out)
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			u, err := s.WriteJob(&buf, suite.JobFile{Repo: repo, Build: f.build, Runs: f.runs, Options: opts})
			if err != nil {
				return err
			}
			// The file must read back as the job it is meant to be.
			name := f.out
			if name == "" {
				name = "job.yaml"
			}
			if _, err := job.Parse(name, buf.Bytes()); err != nil {
				return fmt.Errorf("perfbot init wrote a job file it cannot read (a bug): %v\n%s", err, buf.String())
			}
			if err := u.Missing(os.Getenv("PATH")); err != nil {
				a.logf("warning: %v", err)
			}
			if st, err := os.Stat(f.repo); err != nil || !st.IsDir() {
				a.logf("warning: --repo %s is not a directory (yet): the job needs a git repository there", f.repo)
			}
			if f.out == "" {
				_, err := a.stdout.Write(buf.Bytes())
				return err
			}
			if err := os.MkdirAll(filepath.Dir(f.out), 0o755); err != nil {
				return err
			}
			flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
			if f.force {
				flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			}
			file, err := os.OpenFile(f.out, flags, 0o644)
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("%s exists: give --force to overwrite it", f.out)
			}
			if err != nil {
				return err
			}
			if _, err := file.Write(buf.Bytes()); err != nil {
				file.Close()
				return err
			}
			if err := file.Close(); err != nil {
				return err
			}
			a.logf("wrote %s: perfbot compare %s BASE COMMIT... measures it", f.out, f.out)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.suite, "suite", "", "the benchmark suite")
	fl.StringVar(&f.repo, "repo", ".", "the git repository (the file names it relative to itself)")
	fl.StringVar(&f.build, "build", "", "the build command (default: the suite's, else none)")
	fl.IntVar(&f.runs, "runs", 0, "runs per commit (default: perfbot's)")
	fl.StringVarP(&f.out, "output", "o", "", "write the job file here (default: stdout)")
	fl.BoolVar(&f.force, "force", false, "overwrite the --output file")
	fl.BoolVar(&f.list, "list", false, "list the suites (with --suite: its options) and write nothing")
	fl.BoolVar(&f.command, "command", false, "print the suite's run command (a sh script) instead of a job file: to run it elsewhere, as in a VM's init")
	return cmd
}

// jobRepo is the repository as the job file at out names it: relative to
// the file's folder (to the current folder when the file goes to stdout).
func jobRepo(repo, out string) (string, error) {
	if out == "" || filepath.IsAbs(repo) {
		return repo, nil
	}
	absRepo, err := filepath.Abs(repo)
	if err != nil {
		return "", err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	return filepath.Rel(filepath.Dir(absOut), absRepo)
}

// listSuites lists every suite with its options, or one suite's.
func listSuites(w io.Writer, only string) error {
	found := false
	for _, s := range suite.All() {
		if only != "" && s.Name != only {
			continue
		}
		found = true
		fmt.Fprintf(w, "%s: %s\n", s.Name, s.Summary)
		for _, o := range s.Options {
			def := ""
			if o.Default != "" {
				def = " (default " + o.Default + ")"
			}
			fmt.Fprintf(w, "  %s%s: %s\n", o.Name, def, o.Doc)
		}
	}
	if !found {
		return fmt.Errorf("--suite %q: no such suite; perfbot has %s", only, strings.Join(suite.Names(), ", "))
	}
	return nil
}
