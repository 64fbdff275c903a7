package watch

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/internal/store"
)

// StoreDirs are the results stores of the watch file's jobs (.perfbot next
// to each job file), each once.
func (c *Config) StoreDirs() []string {
	var dirs []string
	for _, jc := range c.Jobs {
		d := filepath.Join(filepath.Dir(jc.File), ".perfbot")
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// Listed is a finding and the store it is in.
type Listed struct {
	Store string
	store.FindingRecord
}

// Findings lists the findings of every store of the watch file, newest
// first.
func (c *Config) Findings(ctx context.Context) ([]Listed, error) {
	var out []Listed
	for _, dir := range c.StoreDirs() {
		st, err := store.Open(dir)
		if err != nil {
			return nil, err
		}
		fs, err := st.Findings(ctx)
		st.Close()
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			out = append(out, Listed{Store: dir, FindingRecord: f})
		}
	}
	slices.SortStableFunc(out, func(a, b Listed) int { return b.Created.Compare(a.Created) })
	return out, nil
}

// SetState sets the state of the finding whose culprit starts with prefix
// (at least 7 hex digits); perfbot keeps, per job, how often its findings
// were dismissed (the job of each dismissed finding).
func (c *Config) SetState(ctx context.Context, prefix string, state store.FindingState, reason string) (string, error) {
	if len(prefix) < 7 {
		return "", fmt.Errorf("commit %q: give at least 7 hex digits", prefix)
	}
	fs, err := c.Findings(ctx)
	if err != nil {
		return "", err
	}
	var match []Listed
	for _, f := range fs {
		if strings.HasPrefix(f.Culprit, prefix) {
			match = append(match, f)
		}
	}
	switch len(match) {
	case 0:
		return "", fmt.Errorf("no finding of a commit %s in %s", prefix, strings.Join(c.StoreDirs(), ", "))
	case 1:
	default:
		return "", fmt.Errorf("commit %s is ambiguous: %d findings match", prefix, len(match))
	}
	st, err := store.Open(match[0].Store)
	if err != nil {
		return "", err
	}
	defer st.Close()
	return match[0].Culprit, st.SetFindingState(ctx, match[0].Culprit, state, reason)
}
