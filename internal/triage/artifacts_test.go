package triage

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
)

// TestNoArtifactsAreNotIdenticalBuilds: build.artifacts is optional
// (docs/jobs.md: default none), and a job that lists no artifact gives no
// evidence that two builds are byte-identical, so sameArtifacts must not
// call them so. (A review found that it did: engine.run then took one look
// at the plain comparison and returned no-change whatever that look
// measured, and sameBuild marked every sweep and forced-alignment build
// "uninformative". The same held when the change lives in a file that is
// not listed: a script, a data file, a shared library the binary loads.)
func TestNoArtifactsAreNotIdenticalBuilds(t *testing.T) {
	dir := t.TempDir()
	mk := func(name, content string) *build.Result {
		d := filepath.Join(dir, name)
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "bench.py"), []byte(content), 0o644)
		return &build.Result{Record: &store.BuildRecord{ArtifactDir: d}}
	}
	a := mk("a", "work(1)\n")
	b := mk("b", "work(1000)  # 1000x slower\n")
	j := &job.Job{} // no build.artifacts
	if sameArtifacts(j, a, b) {
		t.Errorf("a job without artifacts: two different commits count as byte-identical builds, so triage says no-change after one look")
	}
}
