package history

import (
	"context"
	"errors"
	"fmt"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// The defaults of a Config's zero values (and of perfbot history's flags).
const (
	// DefaultAlpha is the level of each step's and each ratio's interval:
	// a watch file's alpha: by default, the level of each look of its
	// sequential test (0.01, not compare's 0.05: a history is looked at
	// again every cycle).
	DefaultAlpha = 0.01
	// DefaultPreset is the layout-knob preset of the forced history.
	DefaultPreset = "c"
	// DefaultBranch is the branch whose first-parent list is followed.
	DefaultBranch = "HEAD"
)

// Config is a history to read (perfbot history, the dashboard's history
// page): the job's tested commits along a branch, for one metric and one
// history.
type Config struct {
	Store *store.Store
	// JobKey and JobName name the atomic job; the name selects what its
	// findings say of the metric.
	JobKey, JobName string
	// Metric is the metric's name.
	Metric string
	// Variant is the store's variant id of the history: "" the plain
	// build's; see VariantOf.
	Variant string
	// Commits is the branch's first-parent list, oldest first; nil is the
	// list of Branch ("": DefaultBranch) in Repo.
	Commits []gitrev.Commit
	Repo    *gitrev.Repo
	Branch  string
	// Alpha is the level of the intervals (0: DefaultAlpha).
	Alpha float64
	// Memo keeps the steps and ratios computed (nil: none).
	Memo *Memo
	// Tested are the job's tested commits of the variant
	// (st.TestedCommits), for a reader that keeps them; nil reads them.
	Tested map[string]store.Tested
}

// Check checks the config's levels.
func (c Config) Check() error {
	if c.Store == nil || c.JobKey == "" || c.Metric == "" {
		return errors.New("history: a store, a job and a metric are needed")
	}
	if !(c.Alpha >= 0 && c.Alpha < 1) {
		return fmt.Errorf("--alpha %g: want a level between 0 and 1", c.Alpha)
	}
	if c.Commits == nil && c.Repo == nil {
		return errors.New("history: no commits and no repository to list them from")
	}
	return nil
}

// Run reads the history: the tested commits' steps and chained levels
// (Build), their ratios to the anchor commit when watch keeps one
// (Ratios), and the change points watch handled with their culprits
// (Annotate). Commits never tested give no point; a history with no
// tested commit has no points and is no error.
func Run(ctx context.Context, cfg Config) (*Series, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	alpha := cfg.Alpha
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	list := cfg.Commits
	if list == nil {
		branch := cfg.Branch
		if branch == "" {
			branch = DefaultBranch
		}
		var err error
		if list, err = cfg.Repo.FirstParents(ctx, branch, 0); err != nil {
			return nil, fmt.Errorf("--branch %q: %w", branch, err)
		}
	}
	st, m := cfg.Store, cfg.Memo
	tested := cfg.Tested
	if tested == nil {
		var err error
		if tested, err = st.TestedCommits(ctx, cfg.JobKey, cfg.Variant); err != nil {
			return nil, err
		}
	}
	s, err := m.BuildFrom(ctx, st, tested, cfg.JobKey, cfg.Variant, cfg.Metric, list, alpha)
	if err != nil {
		return nil, err
	}
	anchor, err := Anchor(ctx, st, cfg.JobKey, cfg.Variant)
	if err != nil {
		return nil, err
	}
	if anchor != "" {
		if err := m.Ratios(ctx, st, s, anchor, alpha); err != nil {
			return nil, err
		}
	}
	if err := Annotate(ctx, st, s, cfg.JobName); err != nil {
		return nil, err
	}
	return s, nil
}

// VariantOf is the store's variant id of a job's history by name: "plain"
// (or "") is the plain build's, "forced" the one under forced alignment of
// the layout-knob preset ("": DefaultPreset) that a watch file's
// histories: [forced] keeps; storeDir is the job's results store folder,
// which may hold presets' files.
func VariantOf(name, preset, storeDir string) (string, error) {
	switch name {
	case "", "plain":
		return "", nil
	case "forced":
		v, err := ForcedVariant(preset, storeDir)
		return measure.VariantID(v), err
	}
	return "", fmt.Errorf("history %q: want plain or forced", name)
}
