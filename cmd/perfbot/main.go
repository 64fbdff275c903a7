// Command perfbot tells whether a commit really changed performance, finds
// the commit that did, and says whether the change is real or only an
// artifact of code or data alignment.
//
// The command layer only parses flags and wires the packages under internal/;
// see each command's long help (perfbot help COMMAND).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	runner "github.com/perfbot/perfbot/internal/run"
)

// Exit statuses, relied on by CI scripts.
const (
	exitOK         = 0 // no regression
	exitRegression = 1 // a significant regression was found
	exitError      = 2 // bad input or a failure of perfbot itself
)

// errRegression is returned by a command that finished and found a
// regression; main turns it into exit status 1.
var errRegression = errors.New("regression found")

// exitCodeError is an error that asks for a particular exit status.
type exitCodeError struct {
	code int
	msg  string
}

func (e exitCodeError) Error() string { return e.msg }

// ExitCode is the exit status the error asks for.
func (e exitCodeError) ExitCode() int { return e.code }

// app carries what every command shares: where to write and how to log.
type app struct {
	stdout, stderr io.Writer
	// stderrTTY is true when stderr is a terminal (progress bars instead of log lines).
	stderrTTY bool
	// lockWait is --wait: how long to wait for another perfbot's hold of
	// the machine's measuring lock (0: as long as it takes).
	lockWait time.Duration
}

func main() {
	// perfbot runs each benchmark and build under a supervisor that is
	// perfbot itself, executed again: runner.Main turns this process into
	// that supervisor (and never returns) when it was started as one.
	// It comes first, before anything else of perfbot's starts.
	runner.Main()
	// SIGINT, SIGTERM and SIGHUP end the command, except where it takes
	// them (signals.go: watch stops in order and reloads).
	ctx, cancel := context.WithCancel(context.Background())
	procSignals.listen(cancel)
	code := run(ctx, os.Stdout, os.Stderr, os.Args[1:])
	cancel()
	os.Exit(code)
}

// run is main without the process: tests call it directly.
func run(ctx context.Context, stdout, stderr io.Writer, args []string) int {
	a := &app{stdout: stdout, stderr: stderr, stderrTTY: isTerminal(stderr)}
	root := newRootCmd(a)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	var coded interface{ ExitCode() int }
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errRegression):
		return exitRegression
	case errors.As(err, &coded):
		fmt.Fprintf(stderr, "perfbot: %v\n", err)
		return coded.ExitCode()
	default:
		fmt.Fprintf(stderr, "perfbot: %v\n", err)
		return exitError
	}
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "perfbot",
		Short: "find real performance changes and tell them from alignment artifacts",
		Long: `perfbot measures commits honestly (builds per commit, repeated interleaved
runs, an embedded results store), prints the 0-day robot's comparison table
with a real statistical test beside it, and explains layout changes between
two binaries.

Exit status: 0 success and no regression; 1 a regression (compare, triage, gate)
or no confirmed culprit (bisect); 2 error; 3 inconclusive (triage, gate).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// --wait reaches every lock a command takes through its context.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if a.lockWait < 0 {
				return fmt.Errorf("--wait %s: want a duration of zero (wait as long as it takes) or more", a.lockWait)
			}
			cmd.SetContext(measure.WithLockWait(cmd.Context(), a.lockWait))
			warnDeprecated(cmd, a)
			return nil
		},
	}
	root.PersistentFlags().DurationVar(&a.lockWait, "wait", 0,
		"give up after waiting this long (e.g. 10m) for another perfbot measuring on this machine; exit status 2 (default: wait until it finishes)")
	setVersion(root)
	root.AddCommand(
		newCompareCmd(a),
		newBisectCmd(a),
		newTriageCmd(a),
		newGateCmd(a),
		newLayoutCmd(a),
		newDemoCmd(a),
		newGCCmd(a),
		newWatchCmd(a),
		newFindingsCmd(a),
		newHistoryCmd(a),
		newSensitivityCmd(a),
		newQualifyCmd(a),
		newInitCmd(a),
		newWorkerCmd(a),
		newSubmitCmd(a),
		newServeCmd(a),
		newVersionCmd(a),
	)
	deprecateOnStderr(root)
	return root
}

// deprecatedKey annotates a flag whose deprecation notice perfbot prints
// itself (see deprecateOnStderr).
const deprecatedKey = "perfbot-deprecated"

// deprecateOnStderr moves the notice of every flag marked with cobra's
// MarkDeprecated from cobra, which prints it on stdout (where it would
// spoil a JSON report), to warnDeprecated, which logs it on stderr. The
// flag stays hidden from the help.
func deprecateOnStderr(c *cobra.Command) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Deprecated != "" {
			_ = c.Flags().SetAnnotation(f.Name, deprecatedKey, []string{f.Deprecated})
			f.Deprecated, f.Hidden = "", true
		}
	})
	for _, sub := range c.Commands() {
		deprecateOnStderr(sub)
	}
}

// warnDeprecated logs a line for each deprecated flag cmd was given.
func warnDeprecated(cmd *cobra.Command, a *app) {
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if msg := f.Annotations[deprecatedKey]; len(msg) > 0 {
			a.logf("warning: --%s is deprecated: %s", f.Name, msg[0])
		}
	})
}

// logf writes a diagnostic line to stderr.
func (a *app) logf(format string, args ...any) {
	fmt.Fprintf(a.stderr, "perfbot: "+format+"\n", args...)
}

// waitf says that another perfbot holds the machine's measuring lock.
func (a *app) waitf(holder string) {
	a.logf("waiting for %s to finish measuring on this machine", holder)
}

// open opens the measuring session of a job and shows what the store has
// to say about itself (a new database in an empty file).
func (a *app) open(ctx context.Context, j *job.Job, storeDir string) (*measure.Session, error) {
	s, err := measure.Open(ctx, j, storeDir, a.waitf)
	if err == nil && s.Store.Notice() != "" {
		a.logf("%s", s.Store.Notice())
	}
	return s, err
}

// cpuMode is the --cpu flag, else the job's run.cpu.
func cpuMode(flag string, j *job.Job) string { return measure.CPUMode(flag, j) }

// pickJob loads a job file and returns its atomic job named name, or its
// only one when name is "".
func pickJob(path, name string) (*job.Job, error) {
	jobs, err := job.Load(path)
	if err != nil {
		return nil, err
	}
	return job.Pick(path, jobs, name)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// needSubcommand makes a command that only groups sub-commands (layout,
// submit) refuse a missing or unknown sub-command with exit status 2, as
// its help says, instead of printing the help and exiting 0.
func needSubcommand(cmd *cobra.Command) {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		var names []string
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() {
				names = append(names, s.Name())
			}
		}
		if len(args) == 0 {
			return fmt.Errorf("%s: name a sub-command: %s (see perfbot help %s)", c.Name(), strings.Join(names, ", "), c.Name())
		}
		return fmt.Errorf("%s: unknown sub-command %q: want %s (see perfbot help %s)", c.Name(), args[0], strings.Join(names, ", "), c.Name())
	}
}
