package watch

import (
	"context"

	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/job"
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
func histories(jc JobConfig, s *Place) ([]hist, error) {
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
	v, err := history.ForcedVariant(preset, storeDir)
	if err != nil {
		return hist{}, err
	}
	return hist{name: "forced", variant: v, id: measure.VariantID(v)}, nil
}

func setAnchor(ctx context.Context, st *store.Store, jobKey, variant, commit string) error {
	return st.PutState(ctx, history.AnchorKind, history.AnchorKey(jobKey, variant), []byte(commit))
}

// DefaultAnchor is whether a new history keeps an anchor when the watch
// file does not say: on. In simulation (TestAnchorSimulation,
// docs/watch.md) the anchor finds 90-98 % of 10 % steps where the chain
// alone finds 28-78 % on a noisy or loaded machine, for 25-50 % more runs.
const DefaultAnchor = true

// anchorMode decides once per history (job key, variant) whether it keeps
// an anchor, and stores the decision, so that its ratio series has no
// holes: a new history takes the watch file's anchor:, else DefaultAnchor;
// a history begun before the decision was stored keeps what it did (an
// anchor if it has one). A later anchor: in the watch file that differs
// switches it, from that cycle on: switched on, the anchor is the newest
// tested commit and the ratios start there; switched off, they end.
func (w *Watcher) anchorMode(ctx context.Context, st *store.Store, jc JobConfig, jobName, jobKey string, h hist) (bool, error) {
	want, why := DefaultAnchor, "default for a new history"
	if jc.AnchorSet {
		want, why = jc.Anchor, "set in the watch file"
	} else if n, _, err := st.TestedVersion(ctx, jobKey, h.id); err != nil {
		return false, err
	} else if n > 0 {
		a, err := history.Anchor(ctx, st, jobKey, h.id)
		if err != nil {
			return false, err
		}
		want, why = a != "", "kept by a history begun before the decision was stored"
	}
	on, was, err := st.DecideAnchorMode(ctx, jobKey, h.id, want, why)
	if err != nil || !jc.AnchorSet || on == jc.Anchor {
		return on, err
	}
	w.logf("watch: %s%s: anchor switched %s by the watch file (was %s: %s)", jobName, h.suffix(), onOff(jc.Anchor), onOff(on), was)
	if !jc.Anchor {
		// Switched on again later, the history takes a new anchor: the
		// ratios of different anchors are not one series.
		if err := st.DeleteState(ctx, history.AnchorKind, history.AnchorKey(jobKey, h.id)); err != nil {
			return false, err
		}
	}
	return jc.Anchor, st.SetAnchorMode(ctx, jobKey, h.id, jc.Anchor, why)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
