package dashboard

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

// TestCyclesPage: the watch cycles recorded in a store (one that went
// through, then two failed ones, the newest a panic whose text carries
// markup) are listed newest first with the failing streak on top, the
// error escaped, and the same rows as JSON at /api/cycles.
func TestCyclesPage(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), ".perfbot")
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i, e := range []string{"", "job kv: branch main: unknown revision", "panic: <script>alert(1)</script>\ngoroutine 1 [running]:"} {
		c := store.CycleRecord{Job: "k1", Name: "kv", Cycle: at.Add(time.Duration(i) * time.Hour).UnixNano(),
			Started: at.Add(time.Duration(i) * time.Hour), Finished: at.Add(time.Duration(i)*time.Hour + time.Minute),
			Tested: 3 - i, Error: e, Panicked: i == 2, Noticed: i == 2}
		if err := st.PutCycle(ctx, &c); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	srv, err := New(ctx, Config{Stores: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, body)
		}
		return string(body)
	}
	page := get("/cycles")
	for _, want := range []string{"its last 2 cycles failed", "panic (notice sent)", "&lt;script&gt;alert(1)&lt;/script&gt;", "unknown revision", ">ok<"} {
		if !strings.Contains(page, want) {
			t.Errorf("cycles page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "<script>alert") {
		t.Errorf("the panic's text reached the page unescaped")
	}
	if i, j := strings.Index(page, "panic (notice sent)"), strings.Index(page, ">ok<"); i < 0 || j < i {
		t.Errorf("not newest first")
	}
	if !strings.Contains(get("/"), `href="/cycles"`) {
		t.Errorf("the pages do not link the cycles page")
	}
	var list CycleList
	body := get("/api/cycles")
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	schematest.ValidateJSON(t, "dashboard-cycles", []byte(body))
	rows := list.Cycles
	if len(rows) != 3 || !rows[0].Panicked || rows[2].Failed || rows[0].Tested != 1 {
		t.Errorf("/api/cycles = %+v", rows)
	}
}
