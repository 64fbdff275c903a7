package measure

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/store"
)

// Session is what measuring one job needs: its results store (with the
// store's lock held), its repository and a builder, and the machine's
// measuring lock: everything a session does (calibrating CPUs, builds in
// the background, layout diffs, runs) is alone on the machine.
type Session struct {
	Store   *store.Store
	Repo    *gitrev.Repo
	Builder *build.Builder
	release []func()
}

// Open opens the store and the repository of an atomic job, takes the
// store's lock (failing at once when another perfbot measures in the same
// store) and then the machine's (waiting while another perfbot measures
// on this machine; wait is told whom). storeDir "" is .perfbot next to the
// job file; a relative one is taken from the current directory (never from
// the repository, where the build worktrees would land in the user's tree).
func Open(ctx context.Context, j *job.Job, storeDir string, wait func(holder string)) (*Session, error) {
	if storeDir == "" {
		storeDir = filepath.Join(filepath.Dir(j.File), ".perfbot")
	}
	storeDir, err := filepath.Abs(storeDir)
	if err != nil {
		return nil, fmt.Errorf("results store %s: %w", storeDir, err)
	}
	st, err := store.Open(storeDir)
	if err != nil {
		return nil, fmt.Errorf("opening results store: %w", err)
	}
	repo, err := gitrev.Open(ctx, j.Repo)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("%s: repo: %w", j.File, err)
	}
	release, err := st.Lock()
	if err != nil {
		st.Close()
		return nil, err
	}
	machine, err := LockMachine(ctx, wait)
	if err != nil {
		release()
		st.Close()
		return nil, err
	}
	return &Session{Store: st, Repo: repo, Builder: &build.Builder{Repo: repo, Store: st, Dir: storeDir},
		release: []func(){machine, release}}, nil
}

// Close releases the locks and closes the store.
func (s *Session) Close() {
	for _, r := range s.release {
		r()
	}
	s.Store.Close()
}

// Resolve turns revisions into commits, naming every unknown one.
func (s *Session) Resolve(ctx context.Context, revs []string) ([]gitrev.Commit, error) {
	return resolveRevs(ctx, s.Repo, revs)
}

// CPUMode is where a job's runs are pinned: the --cpu flag when given,
// else the job's run.cpu (auto by default).
func CPUMode(flag string, j *job.Job) string {
	if flag != "" {
		return flag
	}
	return j.Run.CPU
}

// ChooseCPU decides where runs are pinned, by mode: "auto" (or "")
// calibrates the allowed CPUs and picks the quietest, "none" does not pin,
// a number pins to that CPU. With auto it logs the calibration and warns
// when the machine is too noisy to see a change of effect percent with
// runs runs. A failed calibration falls back to no pinning, and says so.
func ChooseCPU(ctx context.Context, mode string, runs int, effect float64, logf func(format string, args ...any)) (int, error) {
	switch mode {
	case "", "auto":
		cal, err := run.Calibrate(ctx, run.Allowed(), run.CalibrateOptions{})
		if err != nil {
			logf("CPU calibration failed (%v); not pinning", err)
			return -1, nil
		}
		cpu := cal.Quietest()
		cv := cal.CV(cpu)
		logf("%s; pinning runs to CPU %d", cal, cpu)
		if mde := 100 * run.MinDetectableEffect(cv, runs); effect > 0 && mde > effect {
			logf("warning: machine too noisy for a %.3g%% effect with %d runs (CV %.1f%% on CPU %d): the smallest detectable change is about %.3g%%; need about %d runs",
				effect, runs, 100*cv, cpu, mde, run.RunsNeeded(cv, effect/100))
		}
		return cpu, nil
	case "none":
		return -1, nil
	default:
		if err := CheckCPUMode(mode); err != nil {
			return 0, err
		}
		return strconv.Atoi(mode)
	}
}

// CheckCPUMode checks a --cpu flag: "" (the job's run.cpu), auto, none or
// a CPU number.
func CheckCPUMode(mode string) error {
	if mode == "" || mode == "auto" || mode == "none" {
		return nil
	}
	if n, err := strconv.Atoi(mode); err != nil || n < 0 {
		return fmt.Errorf("--cpu %q: want auto, none or a CPU number", mode)
	}
	return nil
}
