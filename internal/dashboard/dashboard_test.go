package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/perfbot/perfbot/internal/report/doc"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

// TestDashboard builds one store with real watch cycles (fixture) and
// checks the server over it: the JSON API, the token, bad input, actions,
// and the pages in a real Chromium (browser_test.go).
func TestDashboard(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C benchmark over two watch cycles")
	}
	f := newFixture(t)
	t.Run("API", func(t *testing.T) { testAPI(t, f) })
	t.Run("Token", func(t *testing.T) { testToken(t, f) })
	t.Run("BadInput", func(t *testing.T) { testBadInput(t, f) })
	t.Run("Actions", func(t *testing.T) { testActions(t, f) })
	t.Run("SVG", func(t *testing.T) { testSVG(t, f) })
	t.Run("Browser", func(t *testing.T) { testBrowser(t, f) })
	t.Run("LoginBrowser", func(t *testing.T) { testLoginBrowser(t, f) })
}

// get fetches path and decodes the JSON answer into v (when not nil); it
// returns the status and body.
func (f *fixture) get(t *testing.T, path string, v any) (int, string) {
	t.Helper()
	code, body := f.do(t, "GET", path, "", "", v)
	if name := apiSchema(path); name != "" && code == http.StatusOK {
		schematest.ValidateJSON(t, name, []byte(body))
	}
	return code, body
}

// apiSchema is the schema (docs/schema) of a GET /api/ response, by its
// path.
func apiSchema(path string) string {
	p, _, _ := strings.Cut(path, "?")
	switch {
	case p == "/api/overview":
		return "dashboard-overview"
	case p == "/api/findings":
		return "dashboard-findings"
	case p == "/api/jobs":
		return "dashboard-jobs"
	case p == "/api/cycles":
		return "dashboard-cycles"
	case strings.HasPrefix(p, "/api/findings/") && !strings.Contains(p[len("/api/findings/"):], "/"):
		return "dashboard-finding"
	case strings.HasPrefix(p, "/api/jobs/") && strings.HasSuffix(p, "/history"):
		return "dashboard-history"
	case p == "/api/compare":
		return "dashboard-compare"
	}
	return ""
}

func (f *fixture) do(t *testing.T, method, path, token, body string, v any) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if v != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("%s %s: %v\n%s", method, path, err, data)
		}
	}
	return resp.StatusCode, string(data)
}

func (f *fixture) jobID() string { return f.srv.cat.jobs[0].ID }

func testAPI(t *testing.T, f *fixture) {
	var o Overview
	if code, body := f.get(t, "/api/overview", &o); code != 200 {
		t.Fatalf("overview: %d %s", code, body)
	}
	if len(o.Jobs) != 1 || o.Jobs[0].Name != "bench" || len(o.Jobs[0].Histories) != 2 || o.Jobs[0].Findings != 1 {
		t.Errorf("jobs %+v: want bench with its plain and forced histories and one finding", o.Jobs)
	}
	if len(o.Findings) != 1 || o.Findings[0].Culprit != f.slow || o.Findings[0].Verdict != "real-regression" || o.Findings[0].Change < 50 {
		t.Errorf("findings %+v: want the slowdown %s, real-regression, about +100%%", o.Findings, f.slow[:12])
	}
	if o.LastCycle == nil || o.LastCycle.Tested != 6 || o.ReadOnly || o.Queue {
		t.Errorf("last cycle %+v (want 6 commits tested: 3 in each history), read-only %v, queue %v", o.LastCycle, o.ReadOnly, o.Queue)
	}
	if len(o.Actions) != 1 || !strings.Contains(o.Actions[0].Command, "perfbot watch "+f.watchFile+" --once") {
		t.Errorf("actions %+v: want a watch cycle", o.Actions)
	}

	// The history: base, two docs-only commits tested and the slowdown's
	// successor; the change into point 2 with its culprit found by
	// bisection.
	var h HistoryView
	if code, body := f.get(t, "/api/jobs/"+f.jobID()+"/history?metric=work_ms", &h); code != 200 {
		t.Fatalf("history: %d %s", code, body)
	}
	if h.Total != 4 || len(h.Points) != 4 || h.Points[0].Commit != f.base || h.Points[3].Commit != f.head {
		t.Fatalf("history of %d points %+v", h.Total, h.Points)
	}
	if len(h.Changes) != 1 || h.Changes[0].Point != 2 || len(h.Changes[0].Culprits) != 1 || h.Changes[0].Culprits[0].Commit != f.slow ||
		h.Changes[0].Culprits[0].Verdict != "real-regression" || h.Changes[0].Step < 60 {
		t.Errorf("changes %+v: want the change into point 2, culprit %s", h.Changes, f.slow[:12])
	}
	if r := h.Points[2].Level / h.Points[1].Level; r < 1.6 || r > 2.4 || h.Points[2].Step < 60 {
		t.Errorf("the level steps by %.2fx (step %+.1f%%), want about 2x", r, h.Points[2].Step)
	}
	if len(h.Variants) != 2 || h.Variants[1].Label != "align64" || h.Branch != "main" {
		t.Errorf("variants %+v, branch %q", h.Variants, h.Branch)
	}
	// The same history built by perfbot history's path (history.Build, no
	// memo) has the same figures.
	var forced HistoryView
	if code, body := f.get(t, "/api/jobs/"+f.jobID()+"/history?variant=align64&from=1&to="+f.head[:9], &forced); code != 200 {
		t.Fatalf("forced history: %d %s", code, body)
	}
	if forced.Variant != h.Variants[1].Variant || forced.From != 1 || forced.To != 4 || len(forced.Points) != 3 {
		t.Errorf("forced history window %d..%d of %s, %d points", forced.From, forced.To, forced.Variant, len(forced.Points))
	}

	// The finding, with its evidence.
	var fv FindingView
	if code, body := f.get(t, "/api/findings/"+f.slow[:10], &fv); code != 200 {
		t.Fatalf("finding: %d %s", code, body)
	}
	if fv.Culprit != f.slow || fv.Finding.Parent == "" || fv.State != "untriaged" || fv.JobRef == nil {
		t.Errorf("finding %+v", fv.FindingSummary)
	}
	if fv.Bisect == nil || len(fv.Bisect.Steps) == 0 {
		t.Errorf("no bisection steps: %+v", fv.Bisect)
	}
	if len(fv.Suspects) == 0 || fv.Suspects[0].SizeBefore == 0 || fv.Layout != "" {
		t.Errorf("suspects %+v (note %q): want triage's, with the layout diff of the stored builds", fv.Suspects, fv.Layout)
	}
	schematest.ValidateValue(t, "finding", fv.Finding)
	schematest.ValidateJSON(t, "triage", fv.Finding.TriageReport)
	tr, err := doc.DecodeTriage(fv.Finding.TriageReport)
	if err != nil || len(tr.Experiments) < 2 || len(tr.Experiments[0].Columns[0].Values) < 5 {
		t.Errorf("triage report: %v, %d experiments", err, len(tr.Experiments))
	}

	// Compare: the stored runs of parent and culprit.
	var cv CompareView
	q := url.Values{"job": {"bench"}, "c": {fv.Finding.Parent[:10], f.slow[:10]}}
	if code, body := f.get(t, "/api/compare?"+q.Encode(), &cv); code != 200 {
		t.Fatalf("compare: %d %s", code, body)
	}
	if len(cv.Commits) != 2 || cv.Commits[1].Commit != f.slow || cv.Commits[1].Runs == 0 || cv.Metric.Name != "work_ms" ||
		!strings.Contains(cv.NCompare, "work_ms") || !json.Valid(cv.Table) {
		t.Errorf("compare %+v", cv)
	}
	schematest.ValidateJSON(t, "compare", cv.Table)
	var listed FindingList
	if code, _ := f.get(t, "/api/findings", &listed); code != 200 || len(listed.Findings) != 1 || listed.Version != APIVersion {
		t.Errorf("findings list: %d, %v", code, listed)
	}
}

// testToken: writes need the token: 401 without, 403 with a wrong one,
// 403 on a read-only server; with it, the state lands in the store.
func testToken(t *testing.T, f *fixture) {
	path := "/api/findings/" + f.slow[:12] + "/state"
	body := `{"state": "dismissed", "reason": "known, fixed upstream"}`
	code, msg := f.do(t, "POST", path, "", body, nil)
	if code != http.StatusUnauthorized || !strings.Contains(msg, "Bearer") {
		t.Errorf("no token: %d %s", code, msg)
	}
	if code, msg := f.do(t, "POST", path, "wrong", body, nil); code != http.StatusForbidden || !strings.Contains(msg, "wrong token") {
		t.Errorf("wrong token: %d %s", code, msg)
	}
	if code, msg := f.do(t, "POST", path, f.token, `{"state": "dismissed"}`, nil); code != http.StatusBadRequest || !strings.Contains(msg, "reason") {
		t.Errorf("dismissed without a reason: %d %s", code, msg)
	}
	var got FindingSummary
	if code, msg := f.do(t, "POST", path, f.token, body, &got); code != 200 || got.State != "dismissed" {
		t.Fatalf("with the token: %d %s", code, msg)
	}
	fs, err := f.cfg.Findings(context.Background())
	if err != nil || len(fs) != 1 || fs[0].State != store.Dismissed || fs[0].Reason != "known, fixed upstream" {
		t.Errorf("the store holds %+v, %v", fs, err)
	}
	if code, msg := f.do(t, "POST", path, f.token, `{"state": "untriaged"}`, &got); code != 200 || got.State != "untriaged" {
		t.Errorf("reopen: %d %s", code, msg)
	}
	// A server without a token is read-only.
	ro, err := New(context.Background(), Config{Watch: f.cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer anything")
	ro.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "read-only") {
		t.Errorf("read-only server: %d %s", rec.Code, rec.Body)
	}
}

// testBadInput: unknown things are 404 with a message, bad parameters
// 400; nothing is a 500, and no answer shows a stack.
func testBadInput(t *testing.T, f *fixture) {
	job := f.jobID()
	for _, tc := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", "/jobs/nosuchjob/history", "", 404, `no job "nosuchjob"`},
		{"GET", "/api/jobs/nosuchjob/history", "", 404, `no job "nosuchjob"`},
		{"GET", "/findings/0123456789abcdef", "", 404, "no finding of a commit 0123456789abcdef"},
		{"GET", "/api/findings/zzzzzzzz", "", 400, "want at least 7 hex digits"},
		{"GET", "/api/findings/abc", "", 400, "want at least 7 hex digits"},
		{"GET", "/api/jobs/" + job + "/history?metric=nope", "", 400, "no such metric (it has work_ms"},
		{"GET", "/api/jobs/" + job + "/history?variant=align32", "", 400, "no such history (it has plain, align64)"},
		{"GET", "/api/jobs/" + job + "/history?branch=dev", "", 400, "not watched on it"},
		{"GET", "/api/jobs/" + job + "/history?from=99", "", 400, "want a point's index (0 to 3)"},
		{"GET", "/api/jobs/" + job + "/history?from=3&to=1", "", 400, "the range is empty"},
		{"GET", "/api/jobs/" + job + "/history?to=deadbeef00", "", 404, "no tested commit of this history starts so"},
		{"GET", "/api/jobs/" + job + "/history?from=x%3Brm", "", 400, "want a point's index"},
		{"GET", "/api/jobs/" + job + "/history?width=9", "", 400, "from 300 to 4000"},
		{"GET", "/api/jobs/" + job + "/history?colour=red", "", 400, `unknown parameter "colour"`},
		{"GET", "/api/jobs/" + job + "/history?metric=work_ms&metric=x", "", 400, "given 2 times"},
		{"GET", "/api/compare?c=" + f.base, "", 400, "parameter job is missing"},
		{"GET", "/api/compare?job=" + job + "&c=" + f.base, "", 400, "give 2 to 8 commits"},
		{"GET", "/api/compare?job=" + job + "&c=" + f.base + "&c=-rf", "", 400, "is not a revision"},
		{"GET", "/api/compare?job=" + job + "&c=" + f.base + "&c=ffffffffff", "", 404, "no commit ffffffffff"},
		{"GET", "/api/compare?job=" + job + "&c=" + f.base + "&c=" + f.head + "&metric=nope", "", 400, "no such metric"},
		{"GET", "/api/compare?job=" + job + "&c=" + f.base + "&c=" + f.head + ":align32", "", 404, "no run succeeded"},
		{"GET", "/nowhere", "", 404, "no page GET /nowhere"},
		{"GET", "/api/findings/" + f.slow[:12] + "?format=xml", "", 400, `unknown parameter "format" (this page takes none)`},
		{"GET", "/static/", "", 404, ""},
		{"GET", "/static/nothing.js", "", 404, ""},
		{"POST", "/api/actions", `{"kind": "explode"}`, 400, `kind="explode": want compare, bisect, triage or rerun`},
		{"POST", "/api/actions", `{"kind": "triage", "job": "` + job + `", "commits": ["` + f.base + `"]}`, 400, "triage takes 2 commits, not 1"},
		{"POST", "/api/actions", `{"kind": "compare", "job": "` + job + `", "commits": ["` + f.base + `", "HEAD~1"], "metric": "nope"}`, 400, "no such metric"},
		{"POST", "/api/actions", `{"kind": `, 400, "not the JSON this endpoint takes"},
		{"POST", "/api/actions", `{"kind": "compare", "extra": 1}`, 400, `unknown field "extra"`},
		{"POST", "/api/actions", ``, 400, "the body is empty"},
		{"POST", "/api/findings/" + f.slow[:12] + "/state", `{"state": "gone"}`, 400, `field state "gone"`},
		{"POST", "/api/findings/0123456789/state", `{"state": "acknowledged"}`, 404, "no finding"},
		{"POST", "/api/findings/" + f.slow[:12] + "/state", strings.Repeat(" ", maxBody+10) + "{}", 413, "larger than"},
		{"DELETE", "/api/overview", "", 404, "no page DELETE /api/overview"},
	} {
		token := ""
		if tc.method == "POST" {
			token = f.token
		}
		code, body := f.do(t, tc.method, tc.path, token, tc.body, nil)
		if code != tc.code || !strings.Contains(message(body), tc.want) {
			t.Errorf("%s %s: %d %q, want %d and %q", tc.method, tc.path, code, body, tc.code, tc.want)
		}
		if strings.Contains(body, "goroutine ") || strings.Contains(body, ".go:") {
			t.Errorf("%s %s: the answer shows a stack:\n%s", tc.method, tc.path, body)
		}
		if strings.HasPrefix(tc.path, "/api/") && !json.Valid([]byte(body)) {
			t.Errorf("%s %s: the API's error is not JSON: %s", tc.method, tc.path, body)
		}
	}
	// A page (not /api/) answers with the error page.
	code, body := f.get(t, "/jobs/nosuchjob/history", nil)
	if code != 404 || !strings.Contains(body, `id="error"`) || !strings.Contains(body, "<html") {
		t.Errorf("page error: %d %s", code, body)
	}
}

// message is the error an answer carries: the API's "error", the error
// page's text unescaped.
func message(body string) string {
	var e struct{ Error string }
	if json.Unmarshal([]byte(body), &e) == nil && e.Error != "" {
		return e.Error
	}
	return html.UnescapeString(body)
}

// recorder is an Enqueuer that keeps what it is given: the fleet's queue
// (River) satisfies the same interface; this checks the server's side of
// the contract (what it hands over, and that it never runs it).
type recorder struct {
	mu  sync.Mutex
	got []Action
}

func (r *recorder) Enqueue(_ context.Context, a Action) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a.Kind == RerunAction {
		return "", fmt.Errorf("%w: no watch worker", ErrNotQueued)
	}
	r.got = append(r.got, a)
	return fmt.Sprintf("job-%d", len(r.got)), nil
}

// testActions: without a queue an action is answered with its command;
// with one, it is enqueued with its job filled in.
func testActions(t *testing.T, f *fixture) {
	body := `{"kind": "triage", "job": "bench", "commits": ["` + f.base[:8] + `", "main"], "metric": "work_ms"}`
	code, msg := f.do(t, "POST", "/api/actions", f.token, body, nil)
	var na struct{ Error, Command string }
	_ = json.Unmarshal([]byte(msg), &na)
	want := "perfbot triage " + f.jobFile + " " + f.base[:12] + " " + f.head[:12] + " --metric work_ms"
	if code != http.StatusNotImplemented || na.Command != want || !strings.Contains(na.Error, "no job queue") {
		t.Errorf("no queue: %d %s\nwant the command %q", code, msg, want)
	}
	q := &recorder{}
	srv, err := New(context.Background(), Config{Watch: f.cfg, Token: f.token, Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/api/actions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+f.token)
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted || !strings.Contains(rec.Body.String(), `"id": "job-1"`) {
		t.Fatalf("with a queue: %d %s", rec.Code, rec.Body)
	}
	if len(q.got) != 1 {
		t.Fatalf("enqueued %d actions", len(q.got))
	}
	a := q.got[0]
	if a.Kind != TriageAction || a.JobFile != f.jobFile || a.JobKey != f.srv.cat.jobs[0].Key || a.Commits[0] != f.base || a.Commits[1] != f.head || a.Metric != "work_ms" {
		t.Errorf("enqueued %+v", a)
	}
	// An action the queue does not take: its command, as without a queue.
	rec = httptest.NewRecorder()
	req = httptest.NewRequest("POST", "/api/actions", strings.NewReader(`{"kind": "rerun"}`))
	req.Header.Set("Authorization", "Bearer "+f.token)
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusNotImplemented || !strings.Contains(rec.Body.String(), "perfbot watch "+f.watchFile+" --once") || len(q.got) != 1 {
		t.Errorf("an action the queue refuses: %d %s", rec.Code, rec.Body)
	}
	// Commands quote for the shell what needs it.
	a = Action{Kind: CompareAction, JobFile: "/srv/my jobs/bench.yaml", Store: "/data/store", Commits: []string{f.base, f.head}, Matrix: true, JobName: "bench n=1"}
	if got := a.Command(); got != "perfbot compare '/srv/my jobs/bench.yaml' --store /data/store --job 'bench n=1' "+f.base[:12]+" "+f.head[:12] {
		t.Errorf("command %s", got)
	}
}

// testSVG: the history plot alone, as perfbot history --format svg
// writes it: well-formed, with its stylesheet and points.
func testSVG(t *testing.T, f *fixture) {
	code, body := f.get(t, "/jobs/"+f.jobID()+"/history.svg?metric=work_ms", nil)
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	d := xml.NewDecoder(bytes.NewReader([]byte(body)))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not well-formed: %v", err)
		}
	}
	if !strings.Contains(body, "<style>") || strings.Count(body, `class="pt"`) != 4 || !strings.Contains(body, `data-culprit="`+f.slow[:12]+`"`) {
		t.Errorf("svg:\n%s", body)
	}
	// Opened on its own, the figure may apply its own stylesheet.
	resp, err := http.Get(f.ts.URL + "/jobs/" + f.jobID() + "/history.svg")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(csp, "style-src 'unsafe-inline'") {
		t.Errorf("the figure is served as %q with the policy %q", resp.Header.Get("Content-Type"), csp)
	}
}
