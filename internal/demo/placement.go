package demo

import "fmt"

// Placement says where the text kernel's inner loop sits, in the base and
// after the text-alignment commit. text.c is built without alignment
// padding and linked right after data.c, so the loop's offset in its
// 64-byte line follows from the bytes before it: Lead bytes of padding in
// the base, and Hook more once the text-alignment commit adds its helper.
// Which offsets are slow is a property of the CPU: [Calibrate] measures a
// fast and a slow one on the host and returns the Placement between them.
type Placement struct {
	// Lead is the padding in bytes before text_kernel (0 to 63).
	Lead int
	// Hook is the size in bytes of the helper that the text-alignment
	// commit adds before text_kernel: 16, 32 or 48, so that linking
	// [Placement.RestorePad] bytes of code first (tools/pad.c, multiples
	// of 16) puts the loop back.
	Hook int
	// Fast and Slow are the loop's offsets in its line in the base and
	// after the text-alignment commit, as measured on a build (by
	// [Calibrate], or for [DefaultPlacement] with gcc 12.2 and GNU ld on
	// x86-64).
	Fast, Slow int
}

// DefaultPlacement is the placement of [Options] without Text: the
// inner loop (11 bytes) at byte 22 of its line in the base and at byte 54
// after the text-alignment commit, with gcc 12.2 and GNU ld on x86-64
// (where the loop sits with no lead at all follows from the C runtime's
// start files and data.c). On the project's AMD EPYC hosts (December
// 2026) the loop ran about 1.38x slower at bytes 54 to 56 than anywhere
// from 0 to 44 (TestCalibrate's scan); elsewhere [Calibrate] finds the
// pair that matters, if any.
var DefaultPlacement = Placement{Lead: defaultLead, Hook: 32, Fast: 22, Slow: 54}

// defaultLead puts the loop at byte 22 with gcc 12.2: with no lead it
// starts at byte noLeadOffset of its line.
const (
	noLeadOffset = 54 // checked by TestDefaultPlacement
	defaultLead  = (22 - noLeadOffset + 64) % 64
)

// RestorePad is the code padding (TEXT_PAD of tools/pad.c) that, linked
// first, puts the text-alignment commit's inner loop back at the base's
// offset in its line.
func (p Placement) RestorePad() int { return 64 - p.Hook }

func (p Placement) check() error {
	if p.Lead < 0 || p.Lead > 63 {
		return fmt.Errorf("demo: text placement: lead %d bytes is not in 0..63", p.Lead)
	}
	if p.Hook != 16 && p.Hook != 32 && p.Hook != 48 {
		return fmt.Errorf("demo: text placement: hook %d bytes is not 16, 32 or 48", p.Hook)
	}
	return nil
}

// String formats the placement as "inner loop at byte 22 of its line,
// 54 after the text-alignment commit (lead 32, hook 32 bytes)".
func (p Placement) String() string {
	return fmt.Sprintf("inner loop at byte %d of its line, %d after the text-alignment commit (lead %d, hook %d bytes)", p.Fast, p.Slow, p.Lead, p.Hook)
}
