package dashboard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"path/filepath"
	"strings"
	"sync"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/plot"
	"github.com/perfbot/perfbot/internal/store"
)

// layoutEntry is the layout diff of a finding's two builds, computed once
// (it reads both binaries: milliseconds for a program, seconds for a
// kernel).
type layoutEntry struct {
	once sync.Once
	d    *layout.DiffResult
	err  error
}

// maxDrawn is how many of triage's suspects are drawn.
const maxDrawn = 3

// drawSuspects diffs the layouts of the finding's stored builds (the plain
// builds of parent and culprit; nothing is built) and draws each suspect
// in its cache lines, with its shift run and root change.
func (s *Server) drawSuspects(ctx context.Context, je *jobEntry, src *source, f *finding.Finding, v *FindingView) {
	names := make([]string, 0, len(v.Suspects))
	for _, sp := range v.Suspects {
		names = append(names, sp.Name)
	}
	d, err := s.layoutDiff(ctx, je, src, f, names)
	if err != nil {
		v.Layout = err.Error()
		return
	}
	for i := range v.Suspects {
		sp := &v.Suspects[i]
		c := changeNamed(d, sp.Name)
		if c == nil {
			continue
		}
		sp.SizeBefore, sp.SizeAfter, sp.Shift = c.A.Size, c.B.Size, c.Shift()
		if c.Run >= 0 && c.Run < len(d.Runs) {
			r := d.Runs[c.Run]
			var causes []string
			for _, cs := range r.Causes {
				causes = append(causes, cs.String())
			}
			sp.Run = fmt.Sprintf("%d symbols of %s from %s to %s moved by %+d bytes", r.Count, r.Section, r.First.Name(), r.Last.Name(), r.Shift)
			if len(causes) > 0 {
				sp.Run += ": " + strings.Join(causes, ", ")
			}
		}
		if rc := d.RootOf(c); rc != nil {
			sp.Root = rc.String()
		}
		if i >= maxDrawn {
			continue
		}
		var b bytes.Buffer
		title := fmt.Sprintf("%s (%s in %s): offset %d -> %d mod 64", sp.Name, sp.Kind, sp.Section, c.A.Off(64), c.B.Off(64))
		before := plot.CacheSide{Label: "before: " + gitrev.Short(f.Parent), Syms: around(d.A, c.A, c, true)}
		after := plot.CacheSide{Label: "after: " + gitrev.Short(f.Culprit), Syms: around(d.B, c.B, c, false)}
		if err := plot.CacheLines(&b, before, after, plot.CacheOptions{Title: title}); err == nil {
			sp.SVG = template.HTML(b.String())
		}
	}
	if p, err := layout.ProposePadding(d, v.Suspects[0].Name); err == nil {
		v.PadAsm, v.PadHow = p.Asm(), p.Instructions()
	}
}

// layoutDiff reads the stored builds of parent and culprit and diffs the
// job's first artifact, analysing the suspects' loops.
func (s *Server) layoutDiff(ctx context.Context, je *jobEntry, src *source, f *finding.Finding, suspects []string) (*layout.DiffResult, error) {
	if je.Job == nil || len(je.Job.Build.Artifacts) == 0 {
		return nil, errors.New("the job names no build artifact, so there is no layout to draw")
	}
	key := src.dir + "\x00" + f.Culprit + "\x00" + f.Parent
	s.mu.Lock()
	e := s.layouts[key]
	if e == nil {
		e = &layoutEntry{}
		s.layouts[key] = e
	}
	s.mu.Unlock()
	e.once.Do(func() {
		st, err := je.store()
		if err != nil {
			e.err = err
			return
		}
		var paths [2]string
		for i, c := range []string{f.Parent, f.Culprit} {
			rec, err := st.GetBuild(ctx, build.Key(je.Job, c, job.Variant{}))
			if errors.Is(err, store.ErrNotFound) {
				e.err = fmt.Errorf("the store holds no build of %s, so its layout cannot be drawn (perfbot layout diff %s %s %s builds it)",
					gitrev.Short(c), je.File, gitrev.Short(f.Parent), gitrev.Short(f.Culprit))
				return
			}
			if err != nil {
				e.err = err
				return
			}
			if rec.Status != store.BuildOK {
				e.err = fmt.Errorf("the build of %s failed: %s", gitrev.Short(c), rec.Error)
				return
			}
			paths[i] = filepath.Join(rec.ArtifactDir, je.Job.Build.Artifacts[0])
		}
		a, err := layout.Open(paths[0])
		if err != nil {
			e.err = fmt.Errorf("reading the parent's build: %w", err)
			return
		}
		b, err := layout.Open(paths[1])
		if err != nil {
			e.err = fmt.Errorf("reading the culprit's build: %w", err)
			return
		}
		e.d = layout.Diff(a, b, layout.DiffOptions{Symbols: suspects, NoSource: true})
	})
	if e.err != nil && ctx.Err() != nil {
		// Cut short by this request: the next one tries again.
		s.mu.Lock()
		delete(s.layouts, key)
		s.mu.Unlock()
	}
	return e.d, e.err
}

// changeNamed is the change of the symbol named so.
func changeNamed(d *layout.DiffResult, name string) *layout.Change {
	for i := range d.Changes {
		if c := &d.Changes[i]; c.B.Name == name || c.A.Name == name {
			return c
		}
	}
	return nil
}

// around lists the symbols of hot's section near it (the lines it touches
// and one on either side), hot marked with its loops.
func around(bin *layout.Binary, hot *layout.Symbol, c *layout.Change, before bool) []plot.Sym {
	const line = 64
	lo := hot.Addr / line * line
	if lo >= line {
		lo -= line
	}
	hi := (hot.End()+line-1)/line*line + line
	var out []plot.Sym
	for i := range bin.Symbols {
		sym := &bin.Symbols[i]
		if sym.Section != hot.Section || sym.End() <= lo || sym.Addr >= hi || sym.Size == 0 && sym != hot {
			continue
		}
		ps := plot.Sym{Name: sym.Name, Addr: sym.Addr, Size: sym.Size, Hot: sym == hot}
		if ps.Hot {
			for _, l := range c.Loops {
				pos := l.B
				if before {
					pos = l.A
				}
				if pos != nil {
					ps.Loops = append(ps.Loops, plot.Span{Start: pos.Start, End: pos.End, Crosses: pos.Crosses})
				}
			}
		}
		out = append(out, ps)
	}
	return out
}
