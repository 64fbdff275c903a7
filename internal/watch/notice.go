package watch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/notify"
	"github.com/perfbot/perfbot/internal/store"
)

// notice is a message about the robot itself, not a finding: a job that
// failed NoticeAfter cycles in a row (a robot that fails silently tells
// no one), or one that went through again after such a notice. The hook
// gets it as a JSON file (PERFBOT_FINDING) with kind "notice".
type notice struct {
	Kind    string    `json:"kind"`  // "notice"
	Event   string    `json:"event"` // "failing" or "recovered"
	Job     string    `json:"job"`
	Failed  int       `json:"failed_cycles"`
	Since   time.Time `json:"since"`
	When    time.Time `json:"when"`
	Subject string    `json:"subject"`
	Body    string    `json:"body"`
}

func failureNotice(c store.CycleRecord, streak []store.CycleRecord) notice {
	first := streak[len(streak)-1]
	var b strings.Builder
	fmt.Fprintf(&b, "perfbot watch: the cycles of job %s have failed %d times in a row, since %s.\n\n",
		c.Name, len(streak), first.Started.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Nothing new of this job is measured or reported until it goes through again.\n")
	fmt.Fprintf(&b, "The newest error (%s):\n\n%s\n", c.Started.UTC().Format(time.RFC3339), indent(c.Error))
	if c.Error != first.Error {
		fmt.Fprintf(&b, "\nThe first error of the streak:\n\n%s\n", indent(first.Error))
	}
	b.WriteString("\nThis notice is sent once per streak; a cycle that goes through again is told too.\n")
	return notice{Kind: "notice", Event: "failing", Job: c.Name, Failed: len(streak), Since: first.Started, When: c.Finished,
		Subject: fmt.Sprintf("[perfbot] %s: %d failed watch cycles in a row", c.Name, len(streak)), Body: b.String()}
}

func recoveryNotice(c store.CycleRecord, streak []store.CycleRecord) notice {
	first := streak[len(streak)-1]
	body := fmt.Sprintf("perfbot watch: job %s went through again at %s, after %d failed cycles since %s.\n",
		c.Name, c.Finished.UTC().Format(time.RFC3339), len(streak), first.Started.UTC().Format(time.RFC3339))
	return notice{Kind: "notice", Event: "recovered", Job: c.Name, Failed: len(streak), Since: first.Started, When: c.Finished,
		Subject: fmt.Sprintf("[perfbot] %s: watch cycles go through again", c.Name), Body: body}
}

// notify sends a notice through the watch file's report config: the hook
// (with the notice's JSON file, written into report.dir/notices) and the
// mail's recipients (not the authors: no commit is to blame). It logs
// what failed and says whether the notice was told: the hook ran, or at
// least one recipient accepted the mail (one bad address must not make
// everyone else get the notice again each cycle). With neither a hook
// nor recipients the log is the only place to tell, and that is told.
func (w *Watcher) notify(ctx context.Context, n notice) (told bool) {
	w.logf("watch: notice: %s", n.Subject)
	rc := w.Config.Report
	var errs []error
	channels := 0
	if rc.Hook != "" {
		channels++
		file, err := writeNotice(rc.Dir, n)
		if err == nil {
			err = notify.Hook(ctx, rc.Hook, filepath.Dir(w.Config.File), file)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("notice hook: %w", err))
		} else {
			told = true
		}
	}
	if rc.SMTP != nil && len(rc.SMTP.To) > 0 {
		channels++
		accepted, err := rc.Notify(ctx, n.Subject, n.Body)
		if err != nil {
			errs = append(errs, fmt.Errorf("notice mail: %w", err))
		}
		told = told || len(accepted) > 0
	}
	if err := errors.Join(errs...); err != nil {
		w.logf("watch: sending the notice: %v", err)
	}
	if channels == 0 {
		w.logf("watch: the notice has no hook or report.smtp.to to go to: it is only in this log")
		return true
	}
	return told
}

// writeNotice writes n as report.dir/notices/<time>-<event>.json.
func writeNotice(dir string, n notice) (string, error) {
	dir = filepath.Join(dir, "notices")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	data, _ := json.MarshalIndent(n, "", "  ")
	file := filepath.Join(dir, fmt.Sprintf("%s-%s-%s.json", n.When.UTC().Format("20060102T150405Z"), n.Event, safeName(n.Job)))
	return file, writeWhole(file, append(data, '\n'))
}

func indent(s string) string { return "    " + strings.ReplaceAll(s, "\n", "\n    ") }

// safeName keeps letters, digits, '-', '_' and '.' of a job's name for a
// file name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}
