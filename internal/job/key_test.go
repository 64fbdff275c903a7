package job

import (
	"strings"
	"testing"
)

func TestKey(t *testing.T) {
	base := mustParse(t, "jobs/kv.yaml", full)[0]
	key := base.Key()
	if len(key) != 16 {
		t.Fatalf("Key() = %q, want 16 hex digits", key)
	}
	// Same content, different file, repo, name, runs, timeouts, cpu,
	// variants and map order: same key.
	same := strings.NewReplacer(
		"name: kv", "name: other",
		"repo: /src/kvstore", "repo: ../moved/kvstore",
		"runs: 10", "runs: 20",
		"warmup: 2", "warmup: 0",
		"timeout: 5m", "timeout: 1h",
		"cpu: 3", "cpu: none",
		"o3: {env: {CFLAGS: -O3}}", "o2: {env: {CFLAGS: -O2}}",
		"env: {CC: gcc, JOBS: 4}", "env: {JOBS: 4, CC: gcc}",
		"[bench, lib/libkv.so]", "[lib/libkv.so, bench]",
	).Replace(full)
	if got := mustParse(t, "elsewhere/kv2.yml", same)[0].Key(); got != key {
		t.Errorf("Key changed with non-measured fields: %s vs %s", got, key)
	}
	if got := mustParse(t, "jobs/kv.yaml", full)[0].Key(); got != key {
		t.Errorf("Key not stable: %s vs %s", got, key)
	}
	// Any measured change: a different key.
	for _, change := range [][2]string{
		{"make CFLAGS", "make V=1 CFLAGS"},
		{"[bench, lib/libkv.so]", "[bench]"},
		{"CC: gcc", "CC: clang"},
		{"./bench ${size}", "./bench  ${size}"},
		{"MALLOC_ARENA_MAX: 2", "MALLOC_ARENA_MAX: 3"},
		{"size: [1000, 20000]", "size: [1001, 20000]"},
		{"threads: 4", "threads: 8"},
		{"text_ms: (?P<value>", "text_ms:  (?P<value>"},
		{"unit: ms", "unit: us"},
		{"name: text_ms", "name: text"},
		{"better: higher", "better: lower"},
		{"from: out/result.json", "from: stdout"},
		{"gobench: go", "gobench: go2"},
		{"builtin: wall", "builtin: user"},
	} {
		src := strings.Replace(full, change[0], change[1], 1)
		if src == full {
			t.Fatalf("change %q not applied", change)
		}
		if got := mustParse(t, "jobs/kv.yaml", src)[0].Key(); got == key {
			t.Errorf("Key unchanged after %q -> %q", change[0], change[1])
		}
	}
	// A fixed figure, so an accidental change of the encoding is seen (it
	// would orphan every stored result).
	if got, want := mustParse(t, "jobs/kvstore.yaml", minimal)[0].Key(), "034038f42ed86c58"; got != want {
		t.Errorf("Key of the minimal job = %s, want %s (changing the encoding orphans stored results)", got, want)
	}
}

func TestVariantKey(t *testing.T) {
	a := Variant{Name: "o3", Env: map[string]string{"CFLAGS": "-O3", "X": "1"}}
	b := Variant{Name: "o3", Env: map[string]string{"X": "1", "CFLAGS": "-O3"}}
	if a.Key() != b.Key() {
		t.Error("Variant.Key depends on map order")
	}
	patched := Variant{Name: "o3", Env: a.Env, Patch: "diff --git a/x.c b/x.c\n"}
	for _, c := range []Variant{{}, {Name: "o2", Env: a.Env}, {Name: "o3", Env: map[string]string{"CFLAGS": "-O2", "X": "1"}}, patched} {
		if c.Key() == a.Key() {
			t.Errorf("Variant %+v has the key of %+v", c, a)
		}
	}
	other := patched
	other.Patch += "+int pad;\n"
	if other.Key() == patched.Key() {
		t.Error("two source patches give one Variant.Key")
	}
	// Keys of variants without a patch are those stored before patches
	// existed.
	if got, want := (Variant{Name: "align64", Env: map[string]string{"PERFBOT_FUNC_ALIGN": "64"}}).Key(), "dca4967e44e8143f"; got != want {
		t.Errorf("Key of a variant without a patch = %s, want %s (changing the encoding orphans stored runs)", got, want)
	}
}

// The golden jobs below were keyed by the code before params were quoted
// for the shell and regex metrics became multi-line (commit 42cbff1). Their
// keys must not change: runs stored under them would be orphaned.

const goldenParamsSrc = `repo: ../kvstore
build:
  command: make SIZE=${size} MODE=${mode}
  artifacts: [bench]
run:
  command: ./bench -size=${size} -mode=${mode} -in ${input} -tag ${tag} "${label}" '${label}' ${HOME}
  env: {IN: "${input}", LABEL: "${label}"}
metrics:
  - name: text_ms
    regex: 'text_ms: (?P<value>[0-9.]+)'
    better: lower
params:
  size: [1000, 4k]
  mode: [fast_path, slow-path]
  input: a/b.txt
  tag: "x@y%z+w=v:u,t"
  label: "two words"
`

const goldenRegexSrc = `repo: ../kvstore
build: {command: make bench}
run: {command: ./bench}
metrics:
  - {name: a, regex: 'a: (?P<value>[0-9.]+)', better: lower}
  - {name: b, regex: '\^b\$: (?P<value>[^ ]+)', better: lower}
  - {name: c, regex: '(?m)^c: (?P<value>\S+)$', better: higher}
  - {name: d, regex: 'd(?P<value>[$^0-9]+)', better: lower}
  - {name: e, regex: '\Ae: (?P<value>\d+)\z', better: lower}
  - {name: f, regex: '(?P<name>\w+)=(?P<value>\d+)', better: lower}
`

const anchoredSrc = `repo: ../kvstore
build: {command: make bench}
run: {command: ./bench}
metrics:
  - {name: m, regex: '^-1\s+(?P<value>[0-9.]+)', better: lower}
`

const unsafeSrc = `repo: ../kvstore
build: {command: make bench}
run:
  command: ./bench ${v}
metrics:
  - {name: m, regex: 'm (?P<value>[0-9.]+)', better: lower}
params:
  v: "1; touch /tmp/x"
`

const goldenEnvSrc = `repo: ../kvstore
build:
  command: make bench
  env: {FLAGS: "-DX=${flags}"}
run:
  command: ./bench ${opt} "${flags}"
metrics:
  - {name: m, regex: 'm (?P<value>[0-9.]+)', better: lower}
variants:
  o3: {env: {CFLAGS: "-O3 ${flags}"}}
params:
  opt: ["", "-v"]
  flags: "-a -b; c|d"
`

func TestGoldenKeys(t *testing.T) {
	for _, tt := range []struct {
		desc string
		src  string
		keys []string // of the atomic jobs, in order
	}{
		{"minimal", minimal, []string{"034038f42ed86c58"}},
		{"full", full, []string{"7bb746d21d1b71da", "e216654179ad3a54"}},
		// Values that need no quoting where they stand.
		{"params", goldenParamsSrc, []string{"2941482b95fbbfb0", "462359a2871845ee", "daf75443eb97d21b", "3870eb3d118e8dd7"}},
		// Environment values are not quoted; an empty value is not quoted.
		{"env", goldenEnvSrc, []string{"0c9d2ff33cb173bc", "50658b1ae09a8913"}},
		// Regexes whose meaning multi-line mode does not change.
		{"regexes", goldenRegexSrc, []string{"115fb08103180a5c"}},
	} {
		jobs := mustParse(t, "jobs/kvstore.yaml", tt.src)
		var got []string
		for _, j := range jobs {
			got = append(got, j.Key())
		}
		if strings.Join(got, " ") != strings.Join(tt.keys, " ") {
			t.Errorf("%s: keys %q, want %q (a changed key orphans the runs stored under the old one)", tt.desc, got, tt.keys)
		}
	}
}

// TestKeyChangesWithMeaning: the keys of jobs whose commands or regexes
// mean something else now are not the keys they had before (above).
func TestKeyChangesWithMeaning(t *testing.T) {
	for _, tt := range []struct {
		desc, src, old string
	}{
		{"param value quoted for the shell", unsafeSrc, "33dbab9be7eaf319"},
		{"regex with ^ now multi-line", anchoredSrc, "0912985eb750750c"},
	} {
		j := mustParse(t, "jobs/kvstore.yaml", tt.src)[0]
		if got := j.Key(); got == tt.old || len(got) != 16 {
			t.Errorf("%s: key %s, want a new one (not %s)", tt.desc, got, tt.old)
		}
	}
	// Exactly the regexes multi-line mode changes get new keys; the old
	// keys are those before (commit 42cbff1).
	for _, tt := range []struct {
		pattern, old string
		changed      bool
	}{
		{`^-1\s+(?P<value>[0-9.]+)`, "0912985eb750750c", true},
		{`x: (?P<value>\d+)$`, "f5605252c4e7ea9c", true},
		{`a|^b(?P<value>\d)`, "3c43b2921e4e3556", true},
		{`(?m)^-1\s+(?P<value>[0-9.]+)`, "3e04fcfa85639f33", false},
		{`\^-1\s+(?P<value>[0-9.]+)`, "e107550c84cdda95", false},
		{`[\^$](?P<value>\d)`, "47b44e55f38f621c", false},
		{`(?-m)^-1\s+(?P<value>[0-9.]+)`, "b2eb2d69db307667", false},
	} {
		src := strings.Replace(anchoredSrc, `'^-1\s+(?P<value>[0-9.]+)'`, "'"+tt.pattern+"'", 1)
		got := mustParse(t, "jobs/kvstore.yaml", src)[0].Key()
		if (got != tt.old) != tt.changed {
			t.Errorf("regex %s: key %s, old key %s; want changed = %v", tt.pattern, got, tt.old, tt.changed)
		}
	}
	if got := mustParse(t, "jobs/kvstore.yaml", unsafeSrc)[0].Run.Command; got != "./bench '1; touch /tmp/x'" {
		t.Errorf("run.command = %q", got)
	}
}
