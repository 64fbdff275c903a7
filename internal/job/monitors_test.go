package job

import (
	"reflect"
	"strings"
	"testing"
)

func TestMonitorsSyntax(t *testing.T) {
	perfStat := Monitor{Name: "perf-stat", Events: DefaultPerfStatEvents}
	for _, tt := range []struct {
		desc, src string
		want      []Monitor
	}{
		{"list of names", "monitors: [perf-profile, perf-stat, vmstat, meminfo, interrupts]\n",
			[]Monitor{{Name: "perf-profile", Event: "auto", Freq: 1000}, perfStat, {Name: "vmstat"}, {Name: "meminfo"}, {Name: "interrupts"}}},
		{"mapping with options", "monitors:\n  perf-profile: {callgraph: true, event: cpu-clock, freq: 999}\n  vmstat:\n",
			[]Monitor{{Name: "perf-profile", CallGraph: true, Event: "cpu-clock", Freq: 999}, {Name: "vmstat"}}},
		{"list with options", "monitors:\n  - perf-stat: {events: [task-clock, context-switches]}\n  - meminfo\n",
			[]Monitor{{Name: "perf-stat", Events: []string{"task-clock", "context-switches"}}, {Name: "meminfo"}}},
		{"none", "", nil},
	} {
		j := mustParse(t, "jobs/kv.yaml", minimal+tt.src)[0]
		if !reflect.DeepEqual(j.Monitors, tt.want) {
			t.Errorf("%s: monitors %+v, want %+v", tt.desc, j.Monitors, tt.want)
		}
	}
}

func TestMonitorsErrors(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"monitors: [perf-profil]", `kv.yaml:13: monitors[0]: unknown monitor "perf-profil" (did you mean "perf-profile"?)`},
		{"monitors: [vmstat, vmstat]", `kv.yaml:13: monitors[1].vmstat: given twice`},
		{"monitors: perf-profile", `kv.yaml:13: monitors: expected a list of monitors`},
		{"monitors: {perf-profile: {event: cycles:ppp}}", `monitors.perf-profile.event: want one of auto, cpu-clock`},
		{"monitors: {perf-profile: {callgraph: yes please}}", `monitors.perf-profile.callgraph: expected true or false`},
		{"monitors: {perf-profile: {freq: 0}}", `monitors.perf-profile.freq: a sampling frequency in Hz, 1 to 100000, got 0`},
		{"monitors: {perf-profile: {frq: 10}}", `unknown field "frq" (did you mean "freq"?)`},
		{"monitors: {vmstat: {x: 1}}", `monitors.vmstat: vmstat takes no options`},
		{"monitors: {perf-stat: {events: []}}", `monitors.perf-stat.events: an empty list counts nothing`},
		{"monitors: {perf-stat: {events: ['cycles; rm -rf /']}}", `monitors.perf-stat.events[0]: "cycles; rm -rf /" is not a perf event name`},
	} {
		_, err := Parse("jobs/kv.yaml", []byte(minimal+tt.src+"\n"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.src, err, tt.want)
		}
	}
}

// TestMonitorKeys: only the monitors that run with the benchmark change a
// job's key, and a job without them keeps the key it always had (the
// golden keys in key_test.go).
func TestMonitorKeys(t *testing.T) {
	key := func(src string) string { return mustParse(t, "jobs/kvstore.yaml", minimal+src)[0].Key() }
	plain := key("")
	if plain != "034038f42ed86c58" {
		t.Fatalf("key of the minimal job = %s, want 034038f42ed86c58", plain)
	}
	for _, src := range []string{"monitors: [vmstat, meminfo, interrupts]\n", "monitors: {}\n", "monitors: []\n"} {
		if got := key(src); got != plain {
			t.Errorf("%q: key %s, want the plain job's %s (the /proc readers cost the run nothing)", src, got, plain)
		}
	}
	// Pinned: a changed encoding would orphan the runs stored under it.
	profiled := key("monitors: [perf-profile]\n")
	if profiled != "89a0c5baf4473599" {
		t.Errorf("key with perf-profile = %s, want 89a0c5baf4473599", profiled)
	}
	same := []string{
		"monitors: {perf-profile: }\n",
		"monitors: {perf-profile: {event: auto, callgraph: false}}\n",
		"monitors: [vmstat, perf-profile]\n",
		"monitors: {perf-profile: {freq: 1000}}\n",
	}
	for _, src := range same {
		if got := key(src); got != profiled {
			t.Errorf("%q: key %s, want %s", src, got, profiled)
		}
	}
	seen := map[string]string{plain: "none", profiled: "perf-profile"}
	for _, src := range []string{
		"monitors: {perf-profile: {callgraph: true}}\n",
		"monitors: {perf-profile: {event: cpu-clock}}\n",
		"monitors: {perf-profile: {freq: 4000}}\n",
		"monitors: [perf-stat]\n",
		"monitors: {perf-stat: {events: [task-clock]}}\n",
		"monitors: [perf-profile, perf-stat]\n",
	} {
		k := key(src)
		if other, dup := seen[k]; dup {
			t.Errorf("%q: key %s, the key of %q", src, k, other)
		}
		seen[k] = src
	}
	if a, b := key("monitors: [perf-stat, perf-profile]\n"), key("monitors: [perf-profile, perf-stat]\n"); a != b {
		t.Errorf("the order of the monitors changes the key: %s vs %s", a, b)
	}
}
