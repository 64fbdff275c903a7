package bisect

import (
	"testing"

	"github.com/perfbot/perfbot/internal/gitrev"
)

// TestMergeRequests: a look that asks for one commit twice (a culprit that
// is also its range's bad end) measures it once, with the most runs asked
// for from the lowest run number, and both requests read it.
func TestMergeRequests(t *testing.T) {
	a, b := gitrev.Commit{Hash: "aaaa"}, gitrev.Commit{Hash: "bbbb"}
	uniq, reqOf := mergeRequests([]Request{{Commit: a, Runs: 12}, {Commit: b, Runs: 6}, {Commit: a, Runs: 17, From: 12}})
	if len(uniq) != 2 || uniq[0] != (Request{Commit: a, Runs: 17}) || uniq[1] != (Request{Commit: b, Runs: 6}) {
		t.Errorf("merged %+v", uniq)
	}
	if len(reqOf) != 3 || reqOf[0] != 0 || reqOf[1] != 1 || reqOf[2] != 0 {
		t.Errorf("requests map to %v, want [0 1 0]", reqOf)
	}
}
