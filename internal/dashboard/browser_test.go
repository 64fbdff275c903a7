package dashboard

import (
	"bytes"
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/perfbot/perfbot/internal/testutil"
)

// ScreenshotsEnv names a folder for the browser test's screenshots; without
// it they go to the test's artifact folder (go test -artifacts keeps it,
// under -outputdir; otherwise it is removed with the test).
const ScreenshotsEnv = "PERFBOT_SCREENSHOTS"

// browser is a headless Chromium driven by chromedp, collecting the
// console's errors.
type browser struct {
	t       *testing.T
	ctx     context.Context
	profile string
	shots   string

	mu       sync.Mutex
	errors   []string
	inflight map[network.RequestID]string // the page's requests not answered yet, by id: their URLs
}

func newBrowser(t *testing.T) *browser {
	testutil.NeedTool(t, "chromium")
	path, _ := exec.LookPath("chromium")
	b := &browser{t: t, inflight: map[network.RequestID]string{}, profile: filepath.Join(t.TempDir(), "profile"), shots: os.Getenv(ScreenshotsEnv)}
	if b.shots == "" {
		b.shots = t.ArtifactDir()
	}
	if err := os.MkdirAll(b.shots, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // root in CI containers
		chromedp.UserDataDir(b.profile),
		chromedp.WindowSize(1300, 1000),
		chromedp.Flag("disable-gpu", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	b.ctx = ctx
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
		b.checkGone()
	})
	// The first call starts the browser, for as long as ctx lives (no
	// timeout on it: later calls have theirs).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	// Listen, not chromedp.Console: its func sees every event that came
	// before the reply to a command by the time the command returns, which
	// settle relies on.
	if err := chromedp.Listen(ctx, b.event); err != nil {
		t.Fatal(err)
	}
	return b
}

// event keeps the console's errors and the requests in flight.
func (b *browser) event(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range e.Args {
				if a.Value != nil {
					args = append(args, string(a.Value))
				} else {
					args = append(args, a.Description)
				}
			}
			b.errors = append(b.errors, "error: "+strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		b.errors = append(b.errors, "exception: "+msg)
	case *cdplog.EventEntryAdded:
		if e.Entry.Level == cdplog.EntryLevelError {
			b.errors = append(b.errors, "error: "+e.Entry.Text+" "+e.Entry.URL)
		}
	case *network.EventRequestWillBeSent:
		b.inflight[e.RequestID] = e.Request.URL
	case *network.EventLoadingFinished:
		delete(b.inflight, e.RequestID)
	case *network.EventLoadingFailed:
		delete(b.inflight, e.RequestID)
	}
}

// checkGone fails the test when a Chromium process of this browser (its
// profile folder on the command line) outlives it.
func (b *browser) checkGone() {
	want := []byte("--user-data-dir=" + b.profile)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var left []string
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err == nil && bytes.Contains(cmd, want) {
				left = append(left, e.Name())
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.t.Errorf("chromium processes %v outlived the test", left)
			return
		}
	}
}

// consoleErrors returns and forgets the errors seen so far, once the page
// has settled: loaded, with none of its requests (a script's fetch
// included) in flight, twice in a row, so that an error of a late load or
// of a script's answer is in.
func (b *browser) consoleErrors() []string {
	b.t.Helper()
	deadline := time.Now().Add(stepTimeout)
	for quiet := 0; quiet < 2; {
		// A command's reply comes after the events before it, which
		// event has seen when it returns.
		state := run(b, "ready state", chromedp.Evaluate[string](`document.readyState`))
		b.mu.Lock()
		pending := slices.Collect(maps.Values(b.inflight))
		b.mu.Unlock()
		if state == "complete" && len(pending) == 0 {
			quiet++
			continue
		}
		quiet = 0
		if time.Now().After(deadline) {
			b.t.Fatalf("the page did not settle in %v: %s, requests in flight %q", stepTimeout, state, pending)
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.errors
	b.errors = nil
	return out
}

// stepTimeout bounds each browser step.
const stepTimeout = 30 * time.Second

// do runs steps, failing the test on error.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// run runs one action and returns its value, failing the test on error.
func run[T any](b *browser, what string, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	return v
}

func visible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(sel))
}
func click(sel string) chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(sel)) }

// page loads url, waits for sel, checks the console stayed clean and
// writes a screenshot named name.
func (b *browser) page(name, url, sel string) {
	b.t.Helper()
	b.do("load "+name, chromedp.Navigate(url), visible(sel))
	b.shot(name)
	if errs := b.consoleErrors(); len(errs) > 0 {
		b.t.Errorf("%s: console errors:\n%s", name, strings.Join(errs, "\n"))
	}
}

func (b *browser) shot(name string) {
	b.t.Helper()
	png := run(b, "screenshot "+name, chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

func (b *browser) count(sel string) int {
	b.t.Helper()
	return run(b, "count "+sel, chromedp.Evaluate[int](`document.querySelectorAll(`+strconv.Quote(sel)+`).length`))
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	return run(b, "text of "+sel, chromedp.Text(chromedp.CSS(sel)))
}

// center is the middle of the element sel on the screen.
func (b *browser) center(sel string) (x, y float64) {
	b.t.Helper()
	r := run(b, "find "+sel, chromedp.Evaluate[[]float64](`(() => { const r = document.querySelector(`+strconv.Quote(sel)+`).getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2]; })()`))
	return r[0], r[1]
}

// testBrowser drives the pages in a real Chromium: every page loads with
// no console error (no failed resource, no script error, no CSP refusal),
// the plots carry their points, hovering a history point shows its
// commit, two clicked points open their comparison, a drag zooms, the
// finding's state is set with the token, and overview -> finding ->
// compare works by clicking.
func testBrowser(t *testing.T, f *fixture) {
	b := newBrowser(t)
	t.Logf("screenshots in %s", b.shots)
	job := f.jobID()

	// The console check itself: a 404 page is a failed load.
	b.do("load a missing page", chromedp.Navigate(f.ts.URL+"/nowhere"), visible("#error"))
	b.shot("error-404")
	if errs := b.consoleErrors(); len(errs) == 0 {
		t.Error("a 404 page left no console error: the console check sees nothing")
	}
	// A late error (a script's request answered with a 404 after 500 ms)
	// is seen too: the check waits for the page's requests, not a time.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(500 * time.Millisecond)
			http.NotFound(w, r)
			return
		}
		f.srv.Handler().ServeHTTP(w, r)
	}))
	defer slow.Close()
	b.do("a late failure", chromedp.Navigate(slow.URL+"/"), visible("#findings"), chromedp.Evaluate[chromedp.Void](`fetch('/slow'), undefined`))
	if errs := b.consoleErrors(); !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, "/slow") || strings.Contains(e, "404") }) {
		t.Errorf("a request that failed 500 ms after the page loaded left no console error (seen: %q)", errs)
	}

	b.page("overview", f.ts.URL+"/", "#findings")
	if n := b.count("#findings a.finding"); n != 1 {
		t.Errorf("overview lists %d findings", n)
	}

	b.page("history", f.ts.URL+"/jobs/"+job+"/history?metric=work_ms", "#historyfig svg")
	if n := b.count("#historyfig svg.history circle.pt"); n != 4 {
		t.Errorf("history plot carries %d points, want 4", n)
	}
	if n := b.count("#historyfig g.change[data-culprit='" + f.slow[:12] + "']"); n != 1 {
		t.Errorf("history plot has %d marks of the culprit", n)
	}
	if n := b.count(".layoutfig svg.layout g.sec"); n == 0 {
		t.Error("no layout history under the plot")
	}
	// Hover: the point's commit shows.
	var h HistoryView
	f.get(t, "/api/jobs/"+job+"/history?metric=work_ms", &h)
	x, y := b.center("circle.pt[data-i='2']")
	b.do("hover", chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y), visible("#hover"))
	if got := b.text("#hover"); !strings.Contains(got, h.Points[2].Short) || !strings.Contains(got, "step +") {
		t.Errorf("hovering point 2 shows %q, want its commit %s and step", got, h.Points[2].Short)
	}
	b.shot("history-hover")
	// Two clicks select two points, whose comparison opens.
	for _, i := range []string{"1", "3"} {
		x, y := b.center("circle.pt[data-i='" + i + "']")
		b.do("click point "+i, chromedp.MouseClickXY(x, y))
	}
	b.do("selection", visible("#comparelink"))
	href := run(b, "link", chromedp.AttributeValue(chromedp.CSS("#comparelink"), "href")).Value
	if !strings.Contains(href, "c="+h.Points[1].Commit) || !strings.Contains(href, "c="+h.Points[3].Commit) {
		t.Errorf("compare link %q does not name points 1 and 3", href)
	}
	b.do("open the comparison", click("#comparelink"), visible("#ncompare"))
	if got := b.text("#ncompare"); !strings.Contains(got, h.Points[1].Commit[:16]) {
		t.Errorf("the comparison of the selection shows:\n%s", got)
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("history interaction: console errors:\n%s", strings.Join(errs, "\n"))
	}
	// A drag across points 1 to 3 zooms to them.
	b.do("back", chromedp.Navigate(f.ts.URL+"/jobs/"+job+"/history?metric=work_ms"), visible("#historyfig svg"))
	x1, y1 := b.center("circle.pt[data-i='1']")
	x3, _ := b.center("circle.pt[data-i='3']")
	b.do("drag", chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, x1, y1, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, (x1+x3)/2, y1, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, x3, y1, chromedp.ButtonLeft))
	b.do("zoomed", visible("#historyfig svg[data-from='1'][data-to='4']"))
	if n := b.count("#historyfig circle.pt"); n != 3 {
		t.Errorf("zoomed to %d points, want 3", n)
	}
	b.page("history-forced", f.ts.URL+"/jobs/"+job+"/history?variant=align64", "#historyfig svg")
	// The figure alone, with its own stylesheet (a refused one would be a
	// console error).
	b.page("history-svg", f.ts.URL+"/jobs/"+job+"/history.svg?metric=work_ms", "svg")

	// Overview -> finding -> compare, by clicking.
	b.do("overview", chromedp.Navigate(f.ts.URL+"/"), visible("#findings"), click("#findings a.finding"), visible("#sentence"))
	b.shot("finding")
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("finding: console errors:\n%s", strings.Join(errs, "\n"))
	}
	if n := b.count("#experiments figure svg.dist"); n < 2 {
		t.Errorf("%d experiments drawn", n)
	}
	if n := b.count("#experiments circle.run"); n < 20 {
		t.Errorf("the experiments carry %d runs", n)
	}
	if n := b.count(".suspect svg.cachelines rect.hot"); n < 2 {
		t.Errorf("the top suspect is drawn %d times (want before and after)", n)
	}
	if n := b.count("#bisectsteps tr"); n < 2 {
		t.Errorf("bisection steps: %d rows", n)
	}
	// The state, set with the token through the page's script.
	b.do("dismiss", chromedp.SendKeys(chromedp.CSS("#token"), f.token), chromedp.Blur(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#reason"), "a known slowdown"), click("button[data-state='dismissed']"), visible("#state"))
	deadline := time.Now().Add(10 * time.Second)
	for b.text("#state") != "dismissed" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if got := b.text("#state"); got != "dismissed" {
		t.Errorf("after dismissing, the page says %q (%s)", got, b.text("#statemsg"))
	}
	if fs, err := f.cfg.Findings(context.Background()); err != nil || len(fs) != 1 || fs[0].Reason != "a known slowdown" {
		t.Errorf("the store holds %+v, %v", fs, err)
	}
	b.do("to compare", click("#comparelink"), visible("#ncompare"))
	b.shot("compare")
	if got := b.text("#ncompare"); !strings.Contains(got, f.slow[:16]) {
		t.Errorf("compare from the finding shows:\n%s", got)
	}
	if n := b.count("#comparefig circle.run"); n < 10 {
		t.Errorf("the compare plot carries %d runs", n)
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("compare: console errors:\n%s", strings.Join(errs, "\n"))
	}
	f.do(t, "POST", "/api/findings/"+f.slow[:12]+"/state", f.token, `{"state": "untriaged"}`, nil)
}
