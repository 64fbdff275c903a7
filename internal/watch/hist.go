package watch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
)

// hist is one history a job keeps: the plain build's, or one under a
// layout knob (forced alignment), where a regression that an alignment
// change hides in the plain build still shows.
type hist struct {
	name    string      // "plain" or "forced"
	variant job.Variant // the build variant
	id      string      // measure.VariantID(variant): how the store keys it
}

func (h hist) suffix() string {
	if h.name == "plain" {
		return ""
	}
	return " (" + h.name + " history)"
}

// histories are the histories a job config asks for, plain first.
func histories(jc JobConfig, s *measure.Session) ([]hist, error) {
	out := []hist{{name: "plain"}}
	for _, name := range jc.Histories {
		switch name {
		case "plain":
		case "forced":
			h, err := forcedHistory(jc.Preset, s.Store.Dir())
			if err != nil {
				return nil, err
			}
			out = append(out, h)
		}
	}
	return out, nil
}

// forcedHistory is the history under the preset's forced alignment; the
// store folder may hold presets of its own.
func forcedHistory(preset, storeDir string) (hist, error) {
	if preset == "" {
		preset = "c"
	}
	p, err := knobs.LookupIn(preset, filepath.Join(storeDir, "knobs"))
	if err != nil {
		return hist{}, fmt.Errorf("preset: %w", err)
	}
	v := p.ForcedAlignment()
	return hist{name: "forced", variant: v, id: measure.VariantID(v)}, nil
}

// changeKey names a handled change in the store.
func changeKey(jobKey, variant, metricName, a, b string) string {
	if variant == "" {
		return fmt.Sprintf("%s|%s|%s|%s", jobKey, metricName, a, b)
	}
	return fmt.Sprintf("%s|%s|%s|%s|%s", jobKey, variant, metricName, a, b)
}

// anchorKind is the store's state kind of a history's anchor commit, keyed
// by job key and variant: chosen once, the first time the history needs
// one, and kept while it builds.
const anchorKind = "watch-anchor"

func anchorKey(jobKey, variant string) string { return jobKey + "|" + variant }

// Anchor returns the anchor commit of a job's history (job key, variant)
// when watch keeps one, else "".
func Anchor(ctx context.Context, st *store.Store, jobKey, variant string) (string, error) {
	data, err := st.GetState(ctx, anchorKind, anchorKey(jobKey, variant))
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return string(data), err
}

func setAnchor(ctx context.Context, st *store.Store, jobKey, variant, commit string) error {
	return st.PutState(ctx, anchorKind, anchorKey(jobKey, variant), []byte(commit))
}
