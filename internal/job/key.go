package job

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/internal/metric"
)

// Key returns a stable identity of what makes this job's runs comparable,
// 16 hex digits of a SHA-256 over, in this order:
//
//   - the build command and the build artifacts (as a set: order ignored);
//   - the build environment;
//   - the run command and the run environment;
//   - the params and their values;
//   - every metric spec (name, kind, regex, JSON path, builtin, from, unit,
//     better; for a format metric its format and the names its family
//     leaves out; for instructions its counter), in file order, and for a regex whose ^ or $ means something
//     else in multi-line mode (metric.LineAnchored) a "multi-line" marker;
//   - the monitors that run with the benchmark (perf-profile, perf-stat) and
//     their options, only when the job has any (writeMonitors), so that the
//     key of a job without them is unchanged.
//
// Commands and environments are taken after param substitution (values
// quoted for the shell where they need it), and the
// environments include the PERFBOT_PARAM_* variables. Environments and
// params are hashed sorted by name, so their order in the file does not
// matter.
//
// Not included, so changing them keeps a job's stored results: the repo
// path (a moved repository is the same benchmark), the job file's path and
// name, runs, warmup, timeouts, run.cpu and the variants (each stored run
// records its variant name; see Variant.Key for a variant's own identity).
func (j *Job) Key() string {
	h := sha256.New()
	writeString(h, "perfbot job key v1")
	writeString(h, j.Build.Command)
	artifacts := slices.Clone(j.Build.Artifacts)
	slices.Sort(artifacts)
	writeStrings(h, artifacts)
	writeMap(h, j.Build.Env)
	writeString(h, j.Run.Command)
	writeMap(h, j.Run.Env)
	writeMap(h, j.Params)
	writeInt(h, len(j.Metrics))
	for _, m := range j.Metrics {
		fields := []string{m.Name, string(m.Kind), m.Pattern, m.Path, m.Builtin, m.From, m.Unit, strconv.Itoa(int(m.Better))}
		if m.Kind == metric.KindFormat {
			// Only format metrics have these fields: other jobs keep
			// their keys.
			fields = append(fields, m.Format, strings.Join(m.Exclude, "\n"))
		}
		if m.IsInstructions() {
			// perf's and callgrind's counts differ in what they
			// count (callgrind: every guest instruction, the
			// dynamic loader's included): never one column.
			fields = append(fields, "counter", string(m.Counter))
		}
		if m.Kind == metric.KindRegex && metric.LineAnchored(m.Pattern) {
			// ^ and $ in this pattern matched only at the ends of the
			// output before regex metrics became multi-line; runs read
			// that way are not comparable with runs read now.
			fields = append(fields, "multi-line")
		}
		writeStrings(h, fields)
	}
	writeMonitors(h, j.Monitors)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Key returns a stable identity of the variant's build: 16 hex digits of a
// SHA-256 of its name, environment and source patch (a variant without a
// patch keeps the key it had before patches existed). The plain build's
// key is that of Variant{}.
func (v Variant) Key() string {
	h := sha256.New()
	writeString(h, "perfbot variant key v1")
	writeString(h, v.Name)
	writeMap(h, v.Env)
	if v.Patch != "" {
		writeString(h, "patch")
		writeString(h, v.Patch)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Variant returns the named variant; "" is the plain build, which always
// exists.
func (j *Job) Variant(name string) (Variant, bool) {
	if name == "" {
		return Variant{}, true
	}
	for _, v := range j.Variants {
		if v.Name == name {
			return v, true
		}
	}
	return Variant{}, false
}

// The hash input is length-prefixed so that no two different jobs encode
// the same.

func writeInt(h hash.Hash, n int) {
	var buf [binary.MaxVarintLen64]byte
	h.Write(buf[:binary.PutUvarint(buf[:], uint64(n))])
}

func writeString(h hash.Hash, s string) {
	writeInt(h, len(s))
	h.Write([]byte(s))
}

func writeStrings(h hash.Hash, list []string) {
	writeInt(h, len(list))
	for _, s := range list {
		writeString(h, s)
	}
}

func writeMap(h hash.Hash, m map[string]string) {
	keys := slices.Sorted(maps.Keys(m))
	writeInt(h, len(keys))
	for _, k := range keys {
		writeString(h, k)
		writeString(h, m[k])
	}
}
