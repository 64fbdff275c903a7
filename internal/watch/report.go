package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/notify"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/store"
)

// record stores a finding (merged into the culprit's earlier one, if
// any), exports it to the report folder, and tells whom the policy says,
// once.
func (w *Watcher) record(ctx context.Context, st *store.Store, f *finding.Finding, policy string) error {
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
	file, err := w.export(f, data)
	if err != nil {
		return err
	}
	if !f.Reported(policy) {
		return nil
	}
	if hook := w.Config.Report.Hook; hook != "" {
		if err := notify.Hook(ctx, hook, file); err != nil {
			w.logf("watch: %v", err)
		}
	}
	return w.mail(ctx, st, f)
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
		// Written whole, then renamed: a reader never sees half a file.
		tmp := base + out.ext + ".tmp"
		if err := os.WriteFile(tmp, out.data, 0o644); err != nil {
			return "", err
		}
		if err := os.Rename(tmp, base+out.ext); err != nil {
			return "", err
		}
	}
	return base + ".json", nil
}

// mail sends the finding to the recipients it has not been sent to yet,
// and records them: at least once (a failed send is retried by the next
// cycle), never twice.
func (w *Watcher) mail(ctx context.Context, st *store.Store, f *finding.Finding) error {
	cfg := w.Config.Report.SMTP
	if cfg == nil {
		return nil
	}
	to := slices.Clone(cfg.To)
	if cfg.Author {
		if addr := authorAddress(f.Author); addr != "" && !slices.Contains(to, addr) {
			to = append(to, addr)
		}
	}
	rec, err := st.Finding(ctx, f.Culprit)
	if err != nil {
		return err
	}
	var missing []string
	for _, r := range to {
		if !slices.Contains(rec.SentTo, r) {
			missing = append(missing, r)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	msg := report.FindingEmail(f, cfg.From, missing, time.Now())
	if err := notify.Mail(ctx, cfg.Addr, cfg.From, missing, msg); err != nil {
		w.logf("watch: mailing %s: %v (the next cycle tries again)", gitrev.Short(f.Culprit), err)
		return nil
	}
	return st.MarkSent(ctx, f.Culprit, f.MessageID(), append(rec.SentTo, missing...))
}

// authorAddress takes the address out of "Name <address>".
func authorAddress(author string) string {
	i, j := bytes.IndexByte([]byte(author), '<'), bytes.LastIndexByte([]byte(author), '>')
	if i < 0 || j < i {
		return ""
	}
	return author[i+1 : j]
}
