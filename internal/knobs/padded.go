package knobs

import (
	"fmt"
	"strconv"

	"github.com/perfbot/perfbot/internal/job"
)

// padKind is what a padded layout moves.
type padKind int

const (
	padText padKind = iota // code only
	padData                // data only
	padBoth                // code, data and the runs' environment
)

// paddedLayouts are the layout variants of a preset whose knobs are
// padding linked first by wrappers (c, kernel): for each kind and layout
// k >= 1, the padding file of 16k bytes and the wrapper folder that links
// it.
type paddedLayouts struct {
	file, wrap [3][]string // by padKind, then by layout
}

// newPaddedLayouts writes the padding files (named prefix+kind+"-pad-"+n,
// code padding in textSection) and their wrapper folders (spec, with the
// variant's name and padding filled in) under dir.
func newPaddedLayouts(dir, prefix, textSection string, spec wrapSpec, tools []string) (paddedLayouts, error) {
	var pl paddedLayouts
	for kind := range pl.file {
		pl.file[kind] = make([]string, MaxLayouts)
		pl.wrap[kind] = make([]string, MaxLayouts)
	}
	for k := 1; k < MaxLayouts; k++ {
		n := k * PadStep
		for kind := padText; kind <= padBoth; kind++ {
			text, data, _ := kind.pads(n)
			file, err := writeOnce(dir, fmt.Sprintf("%s%s-pad-%d", prefix, kind.word(), n), ".s", padAsm(text, data, textSection))
			if err != nil {
				return pl, err
			}
			s := spec
			s.variant, s.pad = kind.name(k), file
			wrap, err := writeWrapDir(dir, s, tools)
			if err != nil {
				return pl, err
			}
			pl.file[kind][k], pl.wrap[kind][k] = file, wrap
		}
	}
	return pl, nil
}

// variants are the first n layouts of a kind, the plain build first.
func (pl paddedLayouts) variants(kind padKind, n int) []job.Variant {
	return layoutsOf(n, kind.name, func(k int) map[string]string {
		m := padVars(kind.pads(k * PadStep))
		m[EnvPadAsm] = pl.file[kind][k]
		return wrapEnv(m, pl.wrap[kind][k])
	})
}

// pads are the code, data and environment padding of n bytes of a kind.
func (kind padKind) pads(n int) (text, data, env int) {
	switch kind {
	case padText:
		return n, 0, 0
	case padData:
		return 0, n, 0
	}
	return n, n, n
}

// word names the kind in padding files: text, data or layout.
func (kind padKind) word() string { return [...]string{"text", "data", "layout"}[kind] }

// name is the variant name of layout k: text16, data16, layout1, ...
func (kind padKind) name(k int) string {
	if kind == padBoth {
		return "layout" + strconv.Itoa(k)
	}
	return kind.word() + strconv.Itoa(k*PadStep)
}
