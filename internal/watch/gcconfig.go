package watch

import (
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/perfbot/perfbot/internal/build"
)

// Defaults of the watch file's daemon fields.
const (
	// DefaultGCMaxBytes bounds the build worktrees of each store folder.
	DefaultGCMaxBytes = 20 << 30 // 20 GiB
	// DefaultGCMaxAge removes a worktree not used for a week.
	DefaultGCMaxAge = 7 * 24 * time.Hour
	// DefaultNoticeAfter is how many failed cycles of a job in a row send
	// a notice.
	DefaultNoticeAfter = 3
)

// gc reads the gc field: {max_size: 20GiB, max_age: 168h}; 0 turns a
// bound off, and "off" both.
func (p *parser) gc(n *yaml.Node, field string) build.Budget {
	b := build.Budget{MaxBytes: DefaultGCMaxBytes, MaxAge: DefaultGCMaxAge}
	if n.Kind == yaml.ScalarNode && n.Value == "off" {
		return build.Budget{}
	}
	p.fields(n, field, map[string]func(*yaml.Node, string){
		"max_size": func(n *yaml.Node, f string) { b.MaxBytes = p.size(n, f) },
		"max_age": func(n *yaml.Node, f string) {
			if n.Value == "0" {
				b.MaxAge = 0
				return
			}
			b.MaxAge = p.duration(n, f)
		},
	})
	return b
}

// size reads a size in bytes: a number with an optional unit, B, KB, MB,
// GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024).
func (p *parser) size(n *yaml.Node, field string) int64 {
	s := strings.TrimSpace(n.Value)
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(num), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if n.Kind != yaml.ScalarNode || err != nil || v < 0 || v*float64(mult) > 1<<62 {
		p.errorf(n, field, "want a size such as 20GiB or 500MB (0: no bound), not %q", n.Value)
		return 0
	}
	return int64(v * float64(mult))
}
