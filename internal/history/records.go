package history

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/store"
)

// What perfbot watch records about a history in the store, and a history
// reads back: the change points it handled and the anchor commit it
// re-measures in every cycle.
const (
	// ChangeKind is the store's state kind of handled change points
	// (ChangeKey): a change point is bisected, triaged and reported once.
	// The state holds its confirmed culprits, space-separated.
	ChangeKind = "watch-change"
	// AnchorKind is the store's state kind of a history's anchor commit,
	// keyed by AnchorKey: chosen once, the first time the history needs
	// one, and kept while it builds.
	AnchorKind = "watch-anchor"
)

// ChangeKey names a handled change in the store: of job jobKey's history
// variant, metric metricName, between the tested commits a and b.
func ChangeKey(jobKey, variant, metricName, a, b string) string {
	if variant == "" {
		return fmt.Sprintf("%s|%s|%s|%s", jobKey, metricName, a, b)
	}
	return fmt.Sprintf("%s|%s|%s|%s|%s", jobKey, variant, metricName, a, b)
}

// AnchorKey names the anchor of job jobKey's history variant.
func AnchorKey(jobKey, variant string) string { return jobKey + "|" + variant }

// Anchor returns the anchor commit of a job's history (job key, variant)
// when watch keeps one, else "".
func Anchor(ctx context.Context, st *store.Store, jobKey, variant string) (string, error) {
	data, err := st.GetState(ctx, AnchorKind, AnchorKey(jobKey, variant))
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return string(data), err
}

// ForcedVariant is the build variant of the history kept under the forced
// alignment of a layout-knob preset ("": DefaultPreset), which the store
// folder storeDir may hold files of.
func ForcedVariant(preset, storeDir string) (job.Variant, error) {
	if preset == "" {
		preset = DefaultPreset
	}
	p, err := knobs.LookupIn(preset, filepath.Join(storeDir, "knobs"))
	if err != nil {
		return job.Variant{}, fmt.Errorf("preset: %w", err)
	}
	return p.ForcedAlignment(), nil
}
