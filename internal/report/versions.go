package report

import (
	"strings"

	"github.com/perfbot/perfbot/internal/compare"
)

// versionsNote is the note under a comparison table whose runs were taken
// by more than one perfbot version ("runs from perfbot versions A and B"),
// or "" when one version took them all (or the runs do not say): a change
// between columns measured by different perfbots may be perfbot's own.
func versionsNote(t *compare.Table) string {
	vs := t.Versions()
	if len(vs) < 2 {
		return ""
	}
	return "runs from perfbot versions " + strings.Join(vs[:len(vs)-1], ", ") + " and " + vs[len(vs)-1] +
		": a difference between columns may be the measuring perfbot's"
}
