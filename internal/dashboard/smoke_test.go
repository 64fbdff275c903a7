package dashboard

import (
	"io"
	"net/http"
	"os"
	"testing"
)

func TestSmoke(t *testing.T) {
	if os.Getenv("SMOKE") == "" {
		t.Skip()
	}
	f := newFixture(t)
	for _, p := range []string{"/", "/api/overview", "/jobs/" + f.srv.cat.jobs[0].ID + "/history", "/api/jobs/" + f.srv.cat.jobs[0].ID + "/history", "/findings/" + f.slow[:12], "/api/findings/" + f.slow, "/compare?job=" + f.srv.cat.jobs[0].ID + "&c=" + f.base + "&c=" + f.head} {
		r, err := http.Get(f.ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		os.MkdirAll("/tmp/smoke", 0o755)
		t.Logf("%s: %d, %d bytes", p, r.StatusCode, len(b))
		if r.StatusCode != 200 {
			t.Logf("%s", b)
		}
	}
	if os.Getenv("SMOKE") == "hold" {
		os.WriteFile("/tmp/smoke/url", []byte(f.ts.URL+" "+f.slow+" "+f.srv.cat.jobs[0].ID+" "+f.base+" "+f.head), 0o644)
		select {}
	}
}
