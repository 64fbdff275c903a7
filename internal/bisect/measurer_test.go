package bisect

import (
	"testing"

	"github.com/perfbot/perfbot/internal/job"
)

// TestRunSeedFromKey: the default run order depends on the job's key, not
// on its length (every key is 16 hex digits): two different jobs get
// different orders.
func TestRunSeedFromKey(t *testing.T) {
	a := &job.Job{Build: job.Build{Command: "make"}, Run: job.Run{Command: "./bench a"}}
	b := &job.Job{Build: job.Build{Command: "make"}, Run: job.Run{Command: "./bench b"}}
	if a.Key() == b.Key() {
		t.Fatalf("the two jobs share the key %s", a.Key())
	}
	ma, mb := &StoreMeasurer{Job: a}, &StoreMeasurer{Job: b}
	ma.init()
	mb.init()
	same := true
	for range 8 {
		if ma.Rand.Int63() != mb.Rand.Int63() {
			same = false
		}
	}
	if same {
		t.Error("two different jobs draw the same run order")
	}
}
