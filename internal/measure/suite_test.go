package measure

import (
	"context"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
)

// TestSuiteProgramsFirst: a suite whose program is not installed stops
// Measure before it builds anything, with the Debian package to install.
func TestSuiteProgramsFirst(t *testing.T) {
	jobs, err := job.Parse("/tmp/x.yaml", []byte("repo: .\nbuild: {command: \"true\"}\nsuite: hackbench\nrun: {env: {PATH: "+t.TempDir()+"}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Measure(context.Background(), jobs[0], nil, Options{})
	if err == nil || !strings.Contains(err.Error(), "hackbench is not installed (not on PATH): install the Debian package rt-tests") {
		t.Fatalf("Measure: %v; want the missing hackbench and its package", err)
	}
}
