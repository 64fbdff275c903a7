package suite

// stress-ng: any stressor, the bogo-op rate as lkp reads it.
//
//	suite: {name: stress-ng, stressor: mutex, ops: 20000}
//
// runs stress-ng --mutex 1 --mutex-ops 20000 --metrics-brief with its --yaml
// file on stdout (the log goes to stderr). Metrics: stress-ng.<stressor>.
// ops_per_sec (bogo ops per second of real time, the key metric),
// stress-ng.<stressor>.ops, and the stressor's miscellaneous metrics
// (stress-ng.mutex.nanosecs_per_mutex).
func stressNG() *Suite {
	return &Suite{
		Name:    "stress-ng",
		Summary: "stress-ng, one stressor (any), bogo ops per second",
		Options: []Option{
			{Name: "stressor", Default: "mutex", Doc: "the stressor (stress-ng --<stressor>): mutex, futex, cpu, ...", check: matches(reName, "a stressor name")},
			{Name: "instances", Default: "1", Doc: "instances of the stressor (0: one per online CPU)", check: count(0)},
			{Name: "ops", Default: "20000", Doc: "stop after this many bogo ops (--<stressor>-ops); 0: no limit, stop after timeout", check: count(0)},
			{Name: "timeout", Doc: "stop after this long (stress-ng --timeout: 10s, 1m)", check: matches(reTimeout, "a stress-ng duration (10, 10s, 1m)")},
			program("stress-ng", "stress-ng"),
			extra("stress-ng"),
		},
		expand: func(o values, given map[string]bool) (*Use, error) {
			st := o.get("stressor")
			if o.get("ops") == "0" && o.get("timeout") == "" {
				return nil, o.errorf("ops", "0 (no limit) needs a timeout, or stress-ng runs for a day")
			}
			s := newScript("stress-ng")
			s.need(Program{Command: o.get("program"), Package: "stress-ng"})
			s.add("set -e")
			s.capture("")
			cmd := quote(o.get("program")) + " --" + st + " " + o.get("instances")
			if o.get("ops") != "0" {
				cmd += " --" + st + "-ops " + o.get("ops")
			}
			if t := o.get("timeout"); t != "" {
				cmd += " --timeout " + t
			}
			s.add(`%s --metrics-brief --yaml "$out"%s >&2`, cmd, args(o.get("args")))
			s.add(`cat "$out"`)
			u := s.use("")
			kpi := named("stress-ng", "stress-ng."+st+".ops_per_sec", higher)
			u.Metrics = append(u.Metrics, kpi, family("stress-ng"))
			return u, nil
		},
	}
}
