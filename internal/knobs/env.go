package knobs

import (
	"strconv"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
)

// envPreset sets only the PERFBOT_* variables, for builds that map them to
// their own flags (see docs/knobs.md). Builds that ignore a variable get
// that layout unchanged, which a triage then reports as no layout effect.
type envPreset struct{}

func (envPreset) Name() string { return "env" }

func (envPreset) Doc() string {
	return "any build: PERFBOT_FUNC_ALIGN, PERFBOT_TEXT_PAD, PERFBOT_DATA_PAD, PERFBOT_LAYOUT_SEED, PERFBOT_ENV_PAD for the build command to map"
}

func (envPreset) ForcedAlignment() job.Variant {
	return job.Variant{Name: AlignName, Env: map[string]string{EnvFuncAlign: strconv.Itoa(ForcedAlign)}}
}

func (envPreset) TextLayouts(n int) []job.Variant {
	return layoutsOf(n, func(k int) string { return "text" + strconv.Itoa(k*PadStep) },
		func(k int) map[string]string {
			m := padVars(k*PadStep, 0, 0)
			m[EnvLayoutSeed] = strconv.Itoa(k)
			return m
		})
}

func (envPreset) DataLayouts(n int) []job.Variant {
	return layoutsOf(n, func(k int) string { return "data" + strconv.Itoa(k*PadStep) },
		func(k int) map[string]string { return padVars(0, k*PadStep, 0) })
}

func (envPreset) Layouts(n int) []job.Variant {
	return layoutsOf(n, func(k int) string { return "layout" + strconv.Itoa(k) },
		func(k int) map[string]string {
			m := padVars(k*PadStep, k*PadStep, k*PadStep)
			m[EnvLayoutSeed] = strconv.Itoa(k)
			return m
		})
}

// Restore sets PERFBOT_TEXT_PAD or PERFBOT_DATA_PAD to the padding's size,
// and PERFBOT_PAD_ASM to an assembler file that holds it, for builds that
// can link it first.
func (envPreset) Restore(p *layout.Padding, workdir string) (job.Variant, error) {
	if err := checkPadding(p); err != nil {
		return job.Variant{}, err
	}
	path := ""
	if !p.Go {
		var err error
		if path, err = writeOnce(workdir, "restore-"+fileSafe(p.Symbol), ".s", p.Asm()); err != nil {
			return job.Variant{}, err
		}
	}
	return job.Variant{Name: RestoreName, Env: restoreVars(p, path)}, nil
}
