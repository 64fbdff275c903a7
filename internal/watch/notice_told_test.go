package watch

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// noticeRig is a Watcher whose report mails a real TLS SMTP server, and a
// job file's folder for the cycle records.
func noticeRig(t *testing.T, opts testutil.SMTPOptions, to ...string) (*Watcher, *mailRig, JobConfig) {
	r := newMailRig(t, opts)
	r.rc.SMTP.To = to
	dir := t.TempDir()
	w := &Watcher{Config: &Config{NoticeAfter: 1, Report: *r.rc, File: filepath.Join(dir, "watch.yaml")}, Logf: t.Logf}
	return w, r, JobConfig{File: filepath.Join(dir, "bench.yaml")}
}

func subjects(r *mailRig) []string {
	var out []string
	for _, m := range r.srv.Messages() {
		for _, line := range strings.Split(m.Data, "\r\n") {
			if strings.HasPrefix(line, "Subject: ") {
				out = append(out, strings.TrimPrefix(line, "Subject: "))
			}
		}
	}
	return out
}

// A failure notice that reached one recipient is told, even when another
// recipient is refused: the others do not get it again every cycle.
func TestNoticeOncePerStreakWithARefusedRecipient(t *testing.T) {
	w, r, jc := noticeRig(t, testutil.SMTPOptions{Refuse: map[string]int{"gone@example.org": 550}},
		"list@example.org", "gone@example.org")
	for i := range 3 {
		w.recordCycle(t.Context(), jc, store.CycleRecord{Job: "k", Name: "bench", Cycle: int64(i + 1),
			Started: time.Now(), Finished: time.Now(), Error: "build: disk full"}, false)
	}
	if got := subjects(r); len(got) != 1 || !strings.Contains(got[0], "1 failed watch cycles in a row") {
		t.Fatalf("notices %q; want one for the streak", got)
	}
}

// A job file that stops loading is told, told again as recovered when it
// loads, and a second breakage is a new streak with its own notice.
func TestJobFileStreaks(t *testing.T) {
	w, r, jc := noticeRig(t, testutil.SMTPOptions{}, "list@example.org")
	bad := errors.New("bench.yaml:3: unknown field iters")
	for i, err := range []error{bad, nil, nil, bad} {
		w.recordLoad(t.Context(), jc, int64(i+1), time.Now(), err)
	}
	got := subjects(r)
	if len(got) != 3 || !strings.Contains(got[0], "failed watch cycles") || !strings.Contains(got[1], "go through again") ||
		!strings.Contains(got[2], "failed watch cycles") {
		t.Fatalf("notices %q; want failing, recovered, failing", got)
	}
	st, err := store.Open(filepath.Join(filepath.Dir(jc.File), ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cs, err := st.Cycles(t.Context(), "file:"+jc.File, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 {
		t.Errorf("recorded %d cycles of the file; want 3 (the file that kept loading records nothing)", len(cs))
	}
}
