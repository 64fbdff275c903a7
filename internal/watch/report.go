package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/notify"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/store"
)

// record stores a finding (merged into the culprit's earlier one, if
// any) and exports it to the report folder.
func (w *Watcher) record(ctx context.Context, st *store.Store, f *finding.Finding) error {
	if old, err := st.Finding(ctx, f.Culprit); err == nil {
		prev, err := finding.Decode(old.Data)
		if err != nil {
			return err
		}
		prev.Merge(f)
		f = prev
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if _, err := st.PutFinding(ctx, f.Culprit, data); err != nil {
		return err
	}
	// Told at the end of the job's cycle (tellPending), once every metric
	// and history that the culprit moved has been merged into it.
	_, err = w.export(f, data)
	return err
}

// hookKind records, per culprit, that the report hook ran for it.
const hookKind = "watch-hook"

// tell runs the hook, once per finding.
func (w *Watcher) tell(ctx context.Context, st *store.Store, f *finding.Finding, file string) error {
	if hook := w.Config.Report.Hook; hook != "" {
		if _, err := st.GetState(ctx, hookKind, f.Culprit); errors.Is(err, store.ErrNotFound) {
			if err := notify.Hook(ctx, hook, filepath.Dir(w.Config.File), file); err != nil {
				w.logf("watch: %v (the next cycle tries again)", err)
			} else if err := st.PutState(ctx, hookKind, f.Culprit, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// tellPending runs the hook of the findings the policy reports that have
// not had it, and mails what the findings call for (MailFindings: first
// mails, updates, retries of failed ones).
func (w *Watcher) tellPending(ctx context.Context, st *store.Store, policy string) {
	fs, err := st.Findings(ctx)
	if err != nil {
		w.logf("watch: %v", err)
		return
	}
	for _, r := range fs {
		f, err := finding.Decode(r.Data)
		if err != nil || r.Withdrawn || r.State == store.Dismissed || !f.Reported(policy) {
			continue
		}
		file := filepath.Join(w.Config.Report.Dir, gitrev.Short(f.Culprit)+".json")
		if err := w.tell(ctx, st, f, file); err != nil {
			w.logf("watch: %v", err)
		}
	}
	if err := MailFindings(ctx, &w.Config.Report, st, policy, time.Now(), w.logf); err != nil {
		w.logf("watch: mail: %v", err)
	}
}

// export writes the finding's JSON, Markdown and mail text into the report
// folder, named by the culprit's short hash; it returns the JSON file.
func (w *Watcher) export(f *finding.Finding, data []byte) (string, error) {
	dir := w.Config.Report.Dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("report folder: %w", err)
	}
	base := filepath.Join(dir, gitrev.Short(f.Culprit))
	var md, txt bytes.Buffer
	_ = report.WriteFindingMarkdown(&md, f)
	_ = report.WriteFindingText(&txt, f)
	for _, out := range []struct {
		ext  string
		data []byte
	}{{".json", append(data, '\n')}, {".md", md.Bytes()}, {".txt", txt.Bytes()}} {
		if err := writeWhole(base+out.ext, out.data); err != nil {
			return "", err
		}
	}
	return base + ".json", nil
}

// writeWhole writes a report folder's file whole, then renames it into
// place: a reader (a hook, a mail script) never sees half a file.
func writeWhole(file string, data []byte) error {
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}
