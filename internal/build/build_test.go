package build

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

type bundle struct {
	builder *Builder
	repo    *gitrev.Repo
	dir     string
}

func setup(t *testing.T, files map[string]string) (*bundle, gitrev.Commit) {
	t.Helper()
	testutil.NeedTool(t, "gcc")
	g := testutil.NewGitRepo(t)
	g.Commit("first", files)
	dir := filepath.Dir(g.Dir) // the store goes beside the repository
	ctx := context.Background()
	repo, err := gitrev.Open(ctx, g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.Resolve(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &bundle{builder: &Builder{Repo: repo, Store: st, Dir: filepath.Join(dir, ".perfbot")}, repo: repo, dir: dir}, c
}

func testJob(command string, artifacts ...string) *job.Job {
	return &job.Job{Build: job.Build{Command: command, Artifacts: artifacts, Timeout: 60e9}}
}

// TestBuildCachedAndRestored: a second build of the same commit and variant
// builds nothing, and a removed worktree is restored from the cached
// artifacts without building.
func TestBuildCachedAndRestored(t *testing.T) {
	b, c := setup(t, map[string]string{"main.c": "int main(void){return 0;}\n"})
	ctx := context.Background()
	j := testJob("gcc -O2 $CFLAGS -o prog main.c && echo built >> builds.count", "prog")
	r1, err := b.builder.Build(ctx, j, c, job.Variant{})
	if err != nil || r1.Cached {
		t.Fatalf("first build: %v, cached=%v", err, r1 != nil && r1.Cached)
	}
	r2, err := b.builder.Build(ctx, j, c, job.Variant{})
	if err != nil || !r2.Cached || r2.Worktree != r1.Worktree {
		t.Fatalf("second build: err=%v cached=%v", err, r2.Cached)
	}
	// Remove the worktree: the next build restores it from the cache.
	if err := b.repo.RemoveWorktree(ctx, r1.Worktree); err != nil {
		t.Fatal(err)
	}
	r3, err := b.builder.Build(ctx, j, c, job.Variant{})
	if err != nil || !r3.Cached {
		t.Fatalf("restore: err=%v cached=%v", err, r3 != nil && r3.Cached)
	}
	if _, err := os.Stat(filepath.Join(r3.Worktree, "prog")); err != nil {
		t.Errorf("restored worktree lacks the artifact: %v", err)
	}
	if _, err := os.Stat(filepath.Join(r3.Worktree, "builds.count")); err == nil {
		t.Errorf("restore ran the build command")
	}
	// A variant is another build, with its environment.
	v := job.Variant{Name: "align64", Env: map[string]string{"CFLAGS": "-falign-functions=64"}}
	r4, err := b.builder.Build(ctx, j, c, v)
	if err != nil || r4.Cached || r4.Worktree == r1.Worktree {
		t.Fatalf("variant build: err=%v cached=%v same worktree=%v", err, r4.Cached, r4.Worktree == r1.Worktree)
	}
	if Key(j, c.Hash, v) == Key(j, c.Hash, job.Variant{}) {
		t.Errorf("variant and plain build share a key")
	}
}

// TestBuildFailure: a failed build is reported with the commit and the last
// lines of its log, wraps ErrFailed, keeps its log, and is remembered.
func TestBuildFailure(t *testing.T) {
	b, c := setup(t, map[string]string{"main.c": "int main(void){ return syntax error; }\n"})
	ctx := context.Background()
	j := testJob("gcc -o prog main.c", "prog")
	_, err := b.builder.Build(ctx, j, c, job.Variant{})
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("error %v does not wrap ErrFailed", err)
	}
	for _, want := range []string{c.Short(), "exit status 1", "error", "build.log"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	_, err2 := b.builder.Build(ctx, j, c, job.Variant{})
	if !errors.Is(err2, ErrFailed) {
		t.Errorf("second build of a failed commit: %v", err2)
	}
	// A missing artifact is a failure too.
	j2 := testJob("true", "nothing-here")
	if _, err := b.builder.Build(ctx, j2, c, job.Variant{}); !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), `"nothing-here" was not produced`) {
		t.Errorf("missing artifact: %v", err)
	}
}

// TestEnvOrder: variant values may refer to earlier values; PERFBOT_* are set.
func TestEnvOrder(t *testing.T) {
	t.Setenv("CFLAGS", "-O1")
	j := &job.Job{Build: job.Build{Env: map[string]string{"CFLAGS": "${CFLAGS} -O2"}}}
	v := job.Variant{Name: "a64", Env: map[string]string{"CFLAGS": "${CFLAGS} -falign-functions=64"}}
	env := Env(j, "abc", v, map[string]string{"X": "1"})
	got := map[string]string{}
	for _, kv := range env {
		k, val, _ := strings.Cut(kv, "=")
		got[k] = val
	}
	if got["CFLAGS"] != "-O1 -O2 -falign-functions=64" || got["PERFBOT_COMMIT"] != "abc" || got["PERFBOT_VARIANT"] != "a64" || got["X"] != "1" {
		t.Errorf("env: CFLAGS=%q PERFBOT_COMMIT=%q PERFBOT_VARIANT=%q X=%q", got["CFLAGS"], got["PERFBOT_COMMIT"], got["PERFBOT_VARIANT"], got["X"])
	}
}

// TestBuildArtifactsEnv: a build gets PERFBOT_BUILD_DIR, its worktree as an
// absolute physical path, and PERFBOT_ARTIFACTS, its artifacts there, one
// a line (the layout knobs' wrappers pad only those links), replacing any
// value perfbot inherited.
func TestBuildArtifactsEnv(t *testing.T) {
	b, c := setup(t, map[string]string{"main.c": "int main(void){return 0;}\n"})
	t.Setenv(EnvArtifacts, "/inherited/value")
	t.Setenv("PERFBOT_WRAP_ACTIVE", "/a/wrapper/folder")
	j := testJob(`mkdir -p out && gcc -o "out/my prog" main.c && printf '%s\n%s' "$PERFBOT_BUILD_DIR" "$PERFBOT_ARTIFACTS" > list && test -z "${PERFBOT_WRAP_ACTIVE+set}"`, "out/my prog", "list")
	r, err := b.builder.Build(context.Background(), j, c, job.Variant{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(r.Record.ArtifactDir, "list"))
	if err != nil {
		t.Fatal(err)
	}
	wt, err := filepath.EvalSymlinks(r.Worktree)
	if err != nil {
		t.Fatal(err)
	}
	if want := wt + "\n" + filepath.Join(wt, "out", "my prog") + "\n" + filepath.Join(wt, "list"); string(got) != want {
		t.Errorf("PERFBOT_BUILD_DIR and PERFBOT_ARTIFACTS = %q, want %q", got, want)
	}
}

func TestSetEnv(t *testing.T) {
	got := SetEnv([]string{"A=1", "B=2", "A=3"}, "A", "x")
	if strings.Join(got, " ") != "A=x B=2" {
		t.Errorf("SetEnv replacing A: %q", got)
	}
	if got := SetEnv([]string{"B=2"}, "A", "x"); strings.Join(got, " ") != "B=2 A=x" {
		t.Errorf("SetEnv adding A: %q", got)
	}
}

// TestBuildSourcePatch: a variant's source patch is applied in the
// build's own worktree (the user's checkout keeps its files), the patched
// build is another build with its own key, it stays applied when the
// cached build's worktree is restored, and a patch that does not apply is
// an error that names it, not a failed build of the commit.
func TestBuildSourcePatch(t *testing.T) {
	b, c := setup(t, map[string]string{"main.c": "int main(void)\n{\n\treturn 0;\n}\n"})
	ctx := context.Background()
	j := testJob("gcc -O2 -o prog main.c && ./prog; echo $? > status", "prog", "status")
	patch := "diff --git a/main.c b/main.c\n--- a/main.c\n+++ b/main.c\n@@ -1,4 +1,4 @@\n int main(void)\n {\n-\treturn 0;\n+\treturn 7;\n }\n"
	v := job.Variant{Name: "patched", Patch: patch}
	if Key(j, c.Hash, v) == Key(j, c.Hash, job.Variant{Name: "patched"}) {
		t.Fatal("the patch is not part of the build key")
	}
	r, err := b.builder.Build(ctx, j, c, v)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(r.Record.ArtifactDir, "status")); strings.TrimSpace(string(got)) != "7" {
		t.Errorf("the patched program exits with %q, want 7", got)
	}
	if src, _ := os.ReadFile(filepath.Join(r.Worktree, "main.c")); !strings.Contains(string(src), "return 7;") {
		t.Errorf("the worktree does not hold the patched source:\n%s", src)
	}
	if src, _ := os.ReadFile(filepath.Join(b.repo.Dir, "main.c")); !strings.Contains(string(src), "return 0;") {
		t.Errorf("the user's checkout was patched:\n%s", src)
	}
	if st := testutil.Git(t, b.repo.Dir, "status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Errorf("the user's checkout changed: %s", st)
	}
	plain, err := b.builder.Build(ctx, j, c, job.Variant{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(plain.Record.ArtifactDir, "status")); strings.TrimSpace(string(got)) != "0" {
		t.Errorf("the plain build exits with %q, want 0", got)
	}
	if err := b.repo.RemoveWorktree(ctx, r.Worktree); err != nil {
		t.Fatal(err)
	}
	again, err := b.builder.Build(ctx, j, c, v)
	if err != nil || !again.Cached {
		t.Fatalf("cached patched build: %v (cached %v)", err, again != nil && again.Cached)
	}
	if src, _ := os.ReadFile(filepath.Join(again.Worktree, "main.c")); !strings.Contains(string(src), "return 7;") {
		t.Errorf("the restored worktree does not hold the patched source:\n%s", src)
	}
	bad := job.Variant{Name: "patched", Patch: strings.Replace(patch, "\treturn 0;", "\treturn 1;", 1)}
	_, err = b.builder.Build(ctx, j, c, bad)
	if err == nil || errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "applying a source patch") || !strings.Contains(err.Error(), "patched") {
		t.Errorf("a patch that does not apply: %v; want an error naming the patch, not a failed build", err)
	}
}
