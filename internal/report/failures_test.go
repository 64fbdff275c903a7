package report

import (
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/compare"
)

// TestWriteFailuresOneLinePerKind: failed runs are reported once per kind
// of failure with their count, not once per distinct message (issue 12:
// "1 of 3 runs failed" was printed three times when all three failed).
func TestWriteFailuresOneLinePerKind(t *testing.T) {
	tab := &compare.Table{Columns: []compare.Column{{
		ID: "0123456789abcdef", Runs: 3, Failed: 3,
		Failures: []compare.Failure{{Status: "crashed", Count: 3, LogDir: "/st/results/j/c/default",
			Reasons: []string{"exit status 1; stderr: n=1", "exit status 1; stderr: n=2", "exit status 1; stderr: n=3"}}},
	}}}
	var b strings.Builder
	if err := WriteFailures(&b, tab); err != nil {
		t.Fatal(err)
	}
	want := "perfbot: 0123456789ab: 3 of 3 runs failed (crashed): exit status 1; stderr: n=1 (and 2 other reasons) (logs under /st/results/j/c/default)\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
