package knobs

import (
	"fmt"
	"path"
	"strings"

	"github.com/perfbot/perfbot/internal/job"
)

// WrappedLink is one link of an artifact that a wrapper changed, read back
// from its line in the build log ("perfbot-wrap: gcc link bench: +pad
// text16 (text-pad-16-....s, first), +-falign-functions=64 ...").
type WrappedLink struct {
	Tool   string // the wrapped tool's name: gcc, cc, clang++, ld, ...
	Output string // the link's -o, as the build gave it (relative to its folder)
	// ByName is true when the output is not an artifact's path but has an
	// artifact's name and lies in the build's folder (zstd links
	// obj/conf_<hash>/zstd and copies it).
	ByName bool
	Padded bool // the padding was put first on the command line
	// PadPresent is true when the padding file was on the command line
	// already (the build links $PERFBOT_PAD_ASM itself), so the wrapper
	// did not add it again.
	PadPresent bool
	Flags      string // the flags added, "" for none
}

// WrappedLinks returns the links the wrappers changed, in the order of the
// build log's lines (a build that links an artifact more than once, as
// the kernel does, has more than one line for it).
func WrappedLinks(log []byte) []WrappedLink {
	var out []WrappedLink
	for _, line := range strings.Split(string(log), "\n") {
		i := strings.Index(line, WrapLogPrefix)
		if i < 0 {
			continue
		}
		rest := line[i+len(WrapLogPrefix):]
		tool, rest, ok := strings.Cut(rest, " link ")
		if !ok || strings.Contains(tool, " ") {
			continue
		}
		output, what, ok := strings.Cut(rest, ": ")
		if !ok {
			continue
		}
		output, byName := strings.CutSuffix(output, " (by name)")
		l := WrappedLink{Tool: tool, Output: output, ByName: byName}
		for _, part := range strings.Split(what, ", +") {
			part = strings.TrimPrefix(part, "+")
			switch {
			case strings.HasPrefix(part, "pad "):
				l.Padded = true
			case strings.HasPrefix(part, "padding ") && strings.HasSuffix(part, "not added"):
				l.PadPresent = true
			case strings.HasPrefix(part, "-"):
				l.Flags = part
			}
		}
		out = append(out, l)
	}
	return out
}

// CheckWrapped says whether the wrappers of variant v padded every
// artifact, from the variant's build log: nil when v has no wrappers (no
// PERFBOT_WRAP) or pads nothing (forced alignment: its flags reach every
// compile by name, artifact or not, and only the byte-identical check of
// the builds tells whether they did anything), or when each artifact's
// link was padded; else an error that names the artifacts no wrapper
// padded and the likely reason. It is the signal for triage to
// tell "the build ignores the knobs" apart from "the knobs changed
// nothing": a build that links its artifact by a compiler path outside
// PATH, or by a tool the preset does not wrap, leaves no line.
func CheckWrapped(v job.Variant, log []byte, artifacts []string) error {
	if v.Env[EnvWrap] == "" || v.Env[EnvPadAsm] == "" {
		return nil
	}
	links := WrappedLinks(log)
	var missing []string
	for _, a := range artifacts {
		found := false
		for _, l := range links {
			if sameArtifact(a, l.Output) && (l.Padded || l.PadPresent) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, a)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("knobs: variant %s: no wrapper padded the link of %s (no %q line in the build log): the build links it by a path outside PATH (CC=/usr/bin/gcc), with -shared, by a tool the preset does not wrap, or under another name; see docs/knobs.md",
		v.Name, strings.Join(missing, ", "), strings.TrimSpace(WrapLogPrefix))
}

// sameArtifact reports whether the link output o, as the build gave it
// (relative to the folder the link ran in), can be artifact a (relative to
// the build's folder): the wrappers log artifact links only, so the same
// file name is enough.
func sameArtifact(a, o string) bool {
	return path.Base(path.Clean(a)) == path.Base(path.Clean(o))
}
