package dashboard

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/plot"
	"github.com/perfbot/perfbot/internal/verdict"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pages holds each page's template (the page on top of base.html).
type pages struct {
	t map[string]*template.Template
}

var funcs = template.FuncMap{
	"pct": func(x float64) string {
		if !finite(x) {
			return "-"
		}
		return fmt.Sprintf("%+.1f%%", x)
	},
	"short": gitrev.Short,
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return t.Local().Format("2006-01-02 15:04")
	},
	"join": strings.Join,
	"json": func(v any) (string, error) {
		data, err := json.Marshal(v)
		return string(data), err
	},
	"query": func(s string) (url.Values, error) { return url.ParseQuery(s) },
	"badge": verdict.Verdict.Badge,
}

func newPages() (*pages, error) {
	base, err := template.New("base.html").Funcs(funcs).ParseFS(templateFS, "templates/base.html")
	if err != nil {
		return nil, err
	}
	p := &pages{t: map[string]*template.Template{}}
	for _, name := range []string{"overview", "history", "finding", "compare", "error", "cycles"} {
		t, err := base.Clone()
		if err != nil {
			return nil, err
		}
		if _, err := t.ParseFS(templateFS, "templates/"+name+".html"); err != nil {
			return nil, err
		}
		p.t[name] = t
	}
	return p, nil
}

// render writes the named page.
func (p *pages) render(w io.Writer, name string, data any) error {
	t := p.t[name]
	if t == nil {
		return fmt.Errorf("no page template %q", name)
	}
	return t.ExecuteTemplate(w, "base", data)
}

// staticHandler serves the embedded stylesheet (with the figures' rules)
// and script.
func staticHandler() http.Handler {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err)
	}
	css, err := fs.ReadFile(sub, "style.css")
	if err != nil {
		panic(err)
	}
	css = append(append(css, '\n'), plot.Stylesheet...)
	files := http.FileServerFS(sub)
	return http.StripPrefix("/static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no listings
			return
		}
		if r.URL.Path == "style.css" {
			w.Header().Set("Content-Type", "text/css; charset=utf-8")
			http.ServeContent(w, r, "style.css", time.Time{}, bytes.NewReader(css))
			return
		}
		files.ServeHTTP(w, r)
	}))
}
