package watch

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/knobs"
)

// Config is a watch file: what to watch and how to report. docs/watch.md
// documents every field.
type Config struct {
	File     string // the watch file's path
	Jobs     []JobConfig
	Branches []string
	Fetch    bool
	Test     TestPolicy
	Interval time.Duration
	// MaxCommits caps the commits one cycle measures per job and branch:
	// a big backlog is thinned evenly (the newest always included) and the
	// rest is left to bisection.
	MaxCommits int
	// Start is a commit (any git revision) from which each branch's
	// history is backfilled, oldest first, within MaxCommits a cycle;
	// "" for none (a new history starts at the head).
	Start  string
	Report ReportConfig
	// GC bounds each store folder's build worktrees (gc.go, daemon.go).
	GC build.Budget
	// NoticeAfter is how many failed cycles of a job in a row send a
	// notice through Report (notice.go).
	NoticeAfter int
	// Class is the fleet's machine class that measures the jobs that name
	// none ("": perfbot serve --watch's --class). A watch on this machine
	// ignores it.
	Class string
}

// JobConfig is one watched job file and its policy.
type JobConfig struct {
	File string // absolute path of the job file
	// Effect is the smallest change, in percent, that makes a finding.
	Effect float64
	// Alpha is the significance level of the tests of the history.
	Alpha float64
	// Report says which verdicts are reported: "regressions" (real
	// regressions, the default), "changes" (real regressions and
	// improvements) or "all" (alignment artifacts and no-change too).
	Report string
	// Histories are the histories kept besides the plain build's:
	// "forced" keeps one under forced alignment, where a real change
	// that an alignment change hides in the plain build still shows.
	Histories []string
	// Preset names the layout knobs of the forced history (default c).
	Preset string
	// Anchor re-measures one anchor commit in every cycle's rounds and
	// looks for changes with E-divisive means over each commit's ratio to
	// it too (docs/changepoints.md): one more commit per cycle, for more
	// recall on a noisy machine. AnchorSet says the watch file set it;
	// else each history keeps the mode decided when it began (on for a
	// new history; see anchorMode).
	Anchor    bool
	AnchorSet bool
	// BrokenBuilds reports a commit whose build failed twice (once more
	// in a later cycle) into the report folder, with its error and log.
	BrokenBuilds bool
	// Class is the fleet's machine class that measures this job file's
	// jobs: its class:, else the watch file's ("" when neither says).
	Class string
}

// TestPolicy says which new commits a cycle measures.
type TestPolicy struct {
	Every int  // measure every Every-th new commit (1: every commit)
	Heads bool // measure only the branch heads
}

func (p TestPolicy) String() string {
	switch {
	case p.Heads:
		return "heads"
	case p.Every <= 1:
		return "every"
	}
	return "every-" + strconv.Itoa(p.Every)
}

// ReportConfig says where findings go.
type ReportConfig struct {
	Dir  string // findings are exported here (absolute)
	Hook string // a command run for each new finding, with PERFBOT_FINDING set to its JSON file
	SMTP *SMTPConfig
}

// Defaults of a watch file.
const (
	DefaultInterval   = 10 * time.Minute
	DefaultMaxCommits = 20
	DefaultEffect     = 5.0
	DefaultAlpha      = 0.01
)

// Load reads and checks a watch file; every problem is reported at once,
// as job.ErrorList, each with its line and field.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse reads a watch file's content; paths in it are relative to path's
// folder.
func Parse(path string, data []byte) (*Config, error) {
	p := &parser{file: path, dir: filepath.Dir(path)}
	c := &Config{File: path, Test: TestPolicy{Every: 1}, Interval: DefaultInterval, MaxCommits: DefaultMaxCommits,
		GC: build.Budget{MaxBytes: DefaultGCMaxBytes, MaxAge: DefaultGCMaxAge}, NoticeAfter: DefaultNoticeAfter}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, job.ErrorList{{File: path, Msg: "empty watch file"}}
		}
		return nil, job.ErrorList{{File: path, Msg: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, job.ErrorList{{File: path, Line: root.Line, Msg: "a watch file is a mapping of fields (jobs, branches, report, ...)"}}
	}
	reportDir := ""
	p.fields(root, "", map[string]func(*yaml.Node, string){
		"jobs":     func(n *yaml.Node, f string) { c.Jobs = p.jobs(n, f) },
		"branches": func(n *yaml.Node, f string) { c.Branches = p.strings(n, f) },
		"fetch":    func(n *yaml.Node, f string) { c.Fetch = p.bool(n, f) },
		"test":     func(n *yaml.Node, f string) { c.Test = p.test(n, f) },
		"interval": func(n *yaml.Node, f string) { c.Interval = p.duration(n, f) },
		"start":    func(n *yaml.Node, f string) { c.Start = p.revision(n, f) },
		"class":    func(n *yaml.Node, f string) { c.Class = p.class(n, f) },
		"max_commits": func(n *yaml.Node, f string) {
			if c.MaxCommits = p.int(n, f); c.MaxCommits < 1 {
				p.errorf(n, f, "want at least 1")
			}
		},
		"gc": func(n *yaml.Node, f string) { c.GC = p.gc(n, f) },
		"notice_after": func(n *yaml.Node, f string) {
			if c.NoticeAfter = p.int(n, f); c.NoticeAfter < 1 {
				p.errorf(n, f, "want at least 1")
			}
		},
		"report": func(n *yaml.Node, f string) {
			p.fields(n, f, map[string]func(*yaml.Node, string){
				"dir":  func(n *yaml.Node, f string) { reportDir = p.str(n, f) },
				"hook": func(n *yaml.Node, f string) { c.Report.Hook = p.str(n, f) },
				"smtp": func(n *yaml.Node, f string) { c.Report.SMTP = p.smtp(n, f) },
			})
		},
	})
	if len(c.Jobs) == 0 && !p.has("jobs") {
		p.errorf(root, "jobs", "required: the job files to watch")
	}
	if len(c.Branches) == 0 {
		c.Branches = []string{"HEAD"}
	}
	for i := range c.Jobs {
		if c.Jobs[i].Class == "" {
			c.Jobs[i].Class = c.Class
		}
	}
	if reportDir == "" {
		reportDir = "reports"
	}
	c.Report.Dir = p.abs(reportDir)
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return c, nil
}

// parser collects the problems of one watch file.
type parser struct {
	file, dir string
	errs      job.ErrorList
	seen      []string
}

func (p *parser) errorf(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.errs = append(p.errs, &job.SyntaxError{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) has(field string) bool { return slices.Contains(p.seen, field) }

func (p *parser) abs(path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(p.dir, path)
}

// fields walks a mapping, handing each known key to its reader and
// reporting unknown ones.
func (p *parser) fields(n *yaml.Node, prefix string, known map[string]func(*yaml.Node, string)) {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, prefix, "want a mapping")
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := k.Value
		if prefix != "" {
			field = prefix + "." + k.Value
		}
		read, ok := known[k.Value]
		if !ok {
			names := make([]string, 0, len(known))
			for name := range known {
				names = append(names, name)
			}
			slices.Sort(names)
			p.errorf(k, field, "unknown field (known: %s)", strings.Join(names, ", "))
			continue
		}
		p.seen = append(p.seen, field)
		read(v, field)
	}
}

func (p *parser) str(n *yaml.Node, field string) string {
	if n.Kind != yaml.ScalarNode {
		p.errorf(n, field, "want a string")
		return ""
	}
	return n.Value
}

func (p *parser) strings(n *yaml.Node, field string) []string {
	if n.Kind == yaml.ScalarNode {
		return []string{n.Value}
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, field, "want a list of strings")
		return nil
	}
	var out []string
	for i, e := range n.Content {
		if s := p.str(e, fmt.Sprintf("%s[%d]", field, i)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func (p *parser) bool(n *yaml.Node, field string) bool {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
		p.errorf(n, field, "want true or false, not %q", n.Value)
	}
	return b
}

func (p *parser) int(n *yaml.Node, field string) int {
	i, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil {
		p.errorf(n, field, "want a whole number, not %q", n.Value)
	}
	return i
}

func (p *parser) float(n *yaml.Node, field string) float64 {
	f, err := strconv.ParseFloat(n.Value, 64)
	if n.Kind != yaml.ScalarNode || err != nil {
		p.errorf(n, field, "want a number, not %q", n.Value)
	}
	return f
}

func (p *parser) duration(n *yaml.Node, field string) time.Duration {
	d, err := time.ParseDuration(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || d <= 0 {
		p.errorf(n, field, "want a positive duration such as 10m or 1h, not %q", n.Value)
	}
	return d
}

// classRE is what a machine class may be (a fleet's queue name).
var classRE = regexp.MustCompile(`^[a-z0-9]+(?:[_-][a-z0-9]+)*$`)

// class reads a fleet's machine class.
func (p *parser) class(n *yaml.Node, field string) string {
	s := p.str(n, field)
	if !classRE.MatchString(s) {
		p.errorf(n, field, "want a machine class: lower-case letters and digits, words joined by single - or _, not %q", s)
	}
	return s
}

// revision reads a git revision; one that git would take for an option is
// refused.
func (p *parser) revision(n *yaml.Node, field string) string {
	s := p.str(n, field)
	if s == "" || strings.HasPrefix(s, "-") {
		p.errorf(n, field, "want a commit (a hash, tag or branch), not %q", s)
	}
	return s
}

func (p *parser) test(n *yaml.Node, field string) TestPolicy {
	s := p.str(n, field)
	switch {
	case s == "every":
		return TestPolicy{Every: 1}
	case s == "heads":
		return TestPolicy{Heads: true}
	case strings.HasPrefix(s, "every-"):
		if k, err := strconv.Atoi(strings.TrimPrefix(s, "every-")); err == nil && k >= 1 {
			return TestPolicy{Every: k}
		}
	}
	p.errorf(n, field, "want every, every-N (such as every-4) or heads, not %q", s)
	return TestPolicy{Every: 1}
}

// jobs reads the job list: file names, or mappings with a file and policy.
func (p *parser) jobs(n *yaml.Node, field string) []JobConfig {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, field, "want a list of job files")
		return nil
	}
	var out []JobConfig
	for i, e := range n.Content {
		f := fmt.Sprintf("%s[%d]", field, i)
		jc := JobConfig{Effect: DefaultEffect, Alpha: DefaultAlpha, Report: "regressions", Preset: "c", BrokenBuilds: true}
		if e.Kind == yaml.ScalarNode {
			jc.File = e.Value
		} else {
			p.fields(e, f, map[string]func(*yaml.Node, string){
				"file":          func(n *yaml.Node, f string) { jc.File = p.str(n, f) },
				"effect":        func(n *yaml.Node, f string) { jc.Effect = p.float(n, f) },
				"alpha":         func(n *yaml.Node, f string) { jc.Alpha = p.float(n, f) },
				"report":        func(n *yaml.Node, f string) { jc.Report = p.str(n, f) },
				"histories":     func(n *yaml.Node, f string) { jc.Histories = p.strings(n, f) },
				"preset":        func(n *yaml.Node, f string) { jc.Preset = p.str(n, f) },
				"anchor":        func(n *yaml.Node, f string) { jc.Anchor = p.bool(n, f) },
				"broken_builds": func(n *yaml.Node, f string) { jc.BrokenBuilds = p.bool(n, f) },
				"class":         func(n *yaml.Node, f string) { jc.Class = p.class(n, f) },
			})
			for _, h := range jc.Histories {
				if h != "plain" && h != "forced" {
					p.errorf(e, f+".histories", "want plain or forced, not %q", h)
				}
			}
			if !slices.Contains(knobs.Names(), jc.Preset) {
				p.errorf(e, f+".preset", "want one of %s, not %q", strings.Join(knobs.Names(), ", "), jc.Preset)
			}
		}
		switch {
		case jc.File == "":
			p.errorf(e, f, "a job file is required")
			continue
		case !(jc.Effect > 0 && jc.Effect < 100):
			p.errorf(e, f+".effect", "want a percentage in (0, 100), not %v", jc.Effect)
		case !(jc.Alpha > 0 && jc.Alpha < 0.25):
			p.errorf(e, f+".alpha", "want a level in (0, 0.25), not %v", jc.Alpha)
		case !slices.Contains([]string{"regressions", "changes", "all"}, jc.Report):
			p.errorf(e, f+".report", "want regressions, changes or all, not %q", jc.Report)
		}
		jc.File = p.abs(jc.File)
		if _, err := os.Stat(jc.File); err != nil {
			p.errorf(e, f, "job file: %v", err)
		}
		out = append(out, jc)
	}
	return out
}
