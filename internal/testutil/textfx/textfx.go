// Package textfx gives the tests that need a real code-alignment effect
// the demo's placement calibrated for this CPU ([demo.Calibrate]), and
// skips them by one rule, naming the measured effect, where no offset of
// the hot loop matters here. It is a package of its own because
// internal/demo's own tests use internal/testutil.
package textfx

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/perfbot/perfbot/internal/demo"
	"github.com/perfbot/perfbot/internal/testutil"
)

var (
	once sync.Once
	cal  *demo.Calibration
	log  string
	err  error
)

// Calibration calibrates the demo's text kernel once per test process
// (about 20 s, pinned to the quietest CPU), logs what it measured in
// every test that asks, and fails the test if the calibration could not
// run (a build failed). It skips, as NeedTool does, without git, make or a
// C compiler.
func Calibration(tb testing.TB) *demo.Calibration {
	tb.Helper()
	testutil.NeedTool(tb, "git", "make", "cc")
	once.Do(func() {
		var b strings.Builder
		cal, err = demo.Calibrate(context.Background(), demo.CalibrateOptions{CPU: demo.AutoCPU, Log: &b})
		log = b.String()
	})
	if err != nil {
		tb.Fatalf("calibrating the demo's text kernel: %v\n%s", err, log)
	}
	tb.Logf("text calibration (CPU %d):\n%s", cal.CPU, log)
	return cal
}

// Placement is the calibrated placement, for demo.Options.Text. It does
// not skip: where no offset matters the text-alignment commit simply
// costs nothing, and the tests of other cases still run.
func Placement(tb testing.TB) *demo.Placement {
	tb.Helper()
	p := Calibration(tb).Placement
	return &p
}

// Need skips the test where the hot loop's offset does not matter on
// this CPU, by the calibration's rule (a median pair ratio of at least
// demo.MinTextRatio with enough slower pairs for a sign test at
// demo.SignLevel), naming the measured effect. It skips in strict mode
// too: the CPU, not the setup, lacks the effect.
func Need(tb testing.TB) *demo.Calibration {
	tb.Helper()
	c := Calibration(tb)
	if !c.Matters() {
		testutil.SkipIncapable(tb, "the code-alignment effect does not reproduce on this CPU: %s", c)
	}
	return c
}
