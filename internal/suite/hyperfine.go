package suite

import "github.com/perfbot/perfbot/internal/metric"

// hyperfine: times any command (a script of the repository, a program it
// builds, a command line that uses it), read with --export-json.
//
//	suite: {name: hyperfine, command: "./build/tool --check data/big.txt", name_as: check, runs: 10}
//
// Metrics: hyperfine.<name>.mean (seconds; the key metric), .median, .min,
// .max, .stddev, .user and .system, where name is the option name_as, else
// the command, normalized as lkp normalizes names ("sleep 0.1" is
// sleep_0.1).
func hyperfine() *Suite {
	return &Suite{
		Name:    "hyperfine",
		Summary: "hyperfine: times a command, mean seconds",
		Options: []Option{
			{Name: "command", Doc: "the command to time (run in the worktree)", check: required("the command to time")},
			{Name: "name_as", Doc: "the name of the command in metric names (default: the command)"},
			{Name: "runs", Default: "10", Doc: "timed runs per perfbot run (--runs)", check: count(2)},
			{Name: "warmup", Default: "1", Doc: "untimed runs first (--warmup)", check: count(0)},
			{Name: "shell", Doc: "--shell (none: run the command without a shell)"},
			{Name: "prepare", Doc: "--prepare: a command run before each timed run"},
			program("hyperfine", "hyperfine"),
			extra("hyperfine"),
		},
		expand: func(o values, given map[string]bool) (*Use, error) {
			name := o.get("name_as")
			if name == "" {
				name = o.get("command")
			}
			id := metric.LKPName(name)
			if id == "" {
				return nil, o.errorf("name_as", "%q gives an empty metric name", name)
			}
			s := newScript("hyperfine")
			s.need(Program{Command: o.get("program"), Package: "hyperfine"})
			s.add("set -e")
			s.capture("")
			cmd := quote(o.get("program")) + " --style none --runs " + o.get("runs") + " --warmup " + o.get("warmup") +
				flag("--shell", o.get("shell")) + flag("--prepare", o.get("prepare"))
			if o.get("name_as") != "" {
				cmd += " --command-name " + quote(o.get("name_as"))
			}
			s.add(`%s --export-json "$out"%s -- %s >&2`, cmd, args(o.get("args")), quote(o.get("command")))
			s.add(`cat "$out"`)
			u := s.use("")
			u.Metrics = append(u.Metrics, named("hyperfine", "hyperfine."+id+".mean", lower), family("hyperfine"))
			return u, nil
		},
	}
}
