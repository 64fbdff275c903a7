package knobs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
)

// writeFiles writes name -> content under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// buildIn copies the files into a fresh folder and runs command there with
// the environment perfbot gives a build of variant v (build.Env: the
// process environment, jobEnv, then the variant's, ${NAME} expanded; and
// PERFBOT_ARTIFACTS naming prog), and returns the folder.
func buildIn(t testing.TB, files map[string]string, command string, jobEnv map[string]string, v job.Variant) string {
	t.Helper()
	dir := t.TempDir()
	buildAt(t, dir, files, command, jobEnv, v, "prog")
	return dir
}

// buildAt writes the files into dir and runs command there as perfbot
// builds variant v of a job with these artifacts (relative to dir); it
// returns the build's output (stdout and stderr).
func buildAt(t testing.TB, dir string, files map[string]string, command string, jobEnv map[string]string, v job.Variant, artifacts ...string) []byte {
	t.Helper()
	writeFiles(t, dir, files)
	j := &job.Job{Build: job.Build{Command: command, Env: jobEnv, Artifacts: artifacts}}
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = build.ArtifactEnv(build.Env(j, strings.Repeat("0", 40), v, nil), dir, artifacts)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("build of variant %q (%v) failed: %v\n%s", v.Name, v.Env, err, out)
	}
	return out
}

// open reads the layout of a built binary.
func open(t testing.TB, path string) *layout.Binary {
	t.Helper()
	b, err := layout.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sym returns the one symbol called name.
func sym(t testing.TB, b *layout.Binary, name string) *layout.Symbol {
	t.Helper()
	s := b.Lookup(name)
	if len(s) != 1 {
		t.Fatalf("%s: %d symbols called %s, want 1", b.Path, len(s), name)
	}
	return s[0]
}

// symLike returns the one symbol whose name contains part (mangled names).
func symLike(t testing.TB, b *layout.Binary, part string) *layout.Symbol {
	t.Helper()
	var found []*layout.Symbol
	for i := range b.Symbols {
		if strings.Contains(b.Symbols[i].Name, part) {
			found = append(found, &b.Symbols[i])
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: %d symbols contain %q, want 1", b.Path, len(found), part)
	}
	return found[0]
}

// shift returns how far name moved from a to b.
func shift(t testing.TB, a, b *layout.Binary, name string) int64 {
	t.Helper()
	return int64(sym(t, b, name).Addr - sym(t, a, name).Addr)
}

// change returns the diff's change of the symbol called name.
func change(t testing.TB, d *layout.DiffResult, name string) *layout.Change {
	t.Helper()
	for i := range d.Changes {
		if d.Changes[i].B.Name == name {
			return &d.Changes[i]
		}
	}
	t.Fatalf("diff %s -> %s: no change for %s", d.A.Path, d.B.Path, name)
	return nil
}
