package store_test

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
)

// Tests of Open and of the store on a bad store folder: an empty, foreign,
// corrupt or read-only database, each on a real file.

func TestCreatedAndEmptyDatabaseFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := open(t, dir)
	if !s.Created() || s.Notice() != "" {
		t.Errorf("new store: Created() = %v, Notice() = %q; want true, \"\"", s.Created(), s.Notice())
	}
	putRuns(t, s, "c", 1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir)
	if s.Created() || s.Notice() != "" {
		t.Errorf("reopened store: Created() = %v, Notice() = %q; want false, \"\"", s.Created(), s.Notice())
	}

	// An empty perfbot.db, as a full disk or an interrupted copy leaves
	// it, is taken as a new store, and Open says so.
	dir = t.TempDir()
	path := filepath.Join(dir, "perfbot.db")
	if err := os.WriteFile(path, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir)
	if !s.Created() {
		t.Error("store in an empty perfbot.db: Created() = false")
	}
	if n := s.Notice(); !strings.Contains(n, path) || !strings.Contains(n, "empty (0 bytes)") || !strings.Contains(n, "new store") {
		t.Errorf("store in an empty perfbot.db: Notice() = %q; want it to name %s, say it was empty (0 bytes) and a new store was made", n, path)
	}
	putRuns(t, s, "c", 1)
	if runs, err := s.Runs(t.Context(), "j", "c", ""); err != nil || len(runs) != 1 {
		t.Errorf("store in an empty perfbot.db: Runs = %d runs, %v; want 1", len(runs), err)
	}
}

// putRuns puts n OK runs of job j on commit, each with 200 values.
func putRuns(t *testing.T, s *store.Store, commit string, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		r := &store.RunRecord{RunKey: store.RunKey{Job: "j", Commit: commit, Index: i}, Status: store.RunOK}
		for k := range 200 {
			r.Values = append(r.Values, metric.Value{Name: fmt.Sprintf("m%03d", k), Unit: "ns", Better: metric.LowerIsBetter, Value: float64(i*1000 + k)})
		}
		if err := s.PutRun(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBadDatabaseFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
		want  string
	}{
		{"other program's database", func(t *testing.T, path string) {
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(`CREATE TABLE notes (x TEXT)`); err != nil {
				t.Fatal(err)
			}
		}, "not a perfbot database"},
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o777); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "perfbot.db")
			tt.setup(t, path)
			s, err := store.Open(dir)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open error %q does not name %s and say %q", err, path, tt.want)
			}
		})
	}
}

// TestCorruptDatabase damages real databases in the ways a crash, a full
// disk or a bad copy does, and checks that the store says the database is
// corrupt and what to do, wherever it finds out (Open, or a later read),
// and never changes the file.
func TestCorruptDatabase(t *testing.T) {
	t.Parallel()
	const pageSize = 4096
	tests := []struct {
		name string
		// damage breaks the database at path, closed.
		damage func(t *testing.T, path string)
		// version is the schema version of the database before damage.
		version int
	}{
		{"garbage", func(t *testing.T, path string) {
			garbage := []byte(strings.Repeat("this is not a SQLite database\n", 200))
			if err := os.WriteFile(path, garbage, 0o666); err != nil {
				t.Fatal(err)
			}
		}, store.SchemaVersion},
		{"truncated", func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, fi.Size()/2+100); err != nil {
				t.Fatal(err)
			}
		}, store.SchemaVersion},
		// Pages after the first overwritten: Open, which reads only the
		// first page, succeeds; reading runs fails.
		{"garbage pages", func(t *testing.T, path string) {
			overwritePages(t, path, pageSize)
		}, store.SchemaVersion},
		// The same in a database of an older schema: Open checks the
		// database before migrating it, and refuses it unchanged.
		{"garbage pages before migrating", func(t *testing.T, path string) {
			overwritePages(t, path, pageSize)
		}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			dir := t.TempDir()
			path := filepath.Join(dir, "perfbot.db")
			s := open(t, dir)
			putRuns(t, s, "c", 30)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if tt.version != store.SchemaVersion {
				setVersion(t, path, tt.version)
			}
			tt.damage(t, path)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}

			var errs []error
			s, err = store.Open(dir)
			if err != nil {
				errs = append(errs, err)
			} else {
				_, err := s.Runs(ctx, "j", "c", "")
				errs = append(errs, err)
				_, err = s.Samples(ctx, "j", []string{"c"}, "")
				errs = append(errs, err)
				putRuns2 := &store.RunRecord{RunKey: store.RunKey{Job: "j", Commit: "c", Index: 31}, Status: store.RunOK,
					Values: []metric.Value{{Name: "m000", Unit: "ns", Better: metric.LowerIsBetter, Value: 1}}}
				errs = append(errs, s.PutRun(ctx, putRuns2))
				if err := s.Close(); err != nil {
					t.Error(err)
				}
			}
			for i, err := range errs {
				if !errors.Is(err, store.ErrCorrupt) {
					t.Errorf("operation %d: error %v, want ErrCorrupt", i, err)
					continue
				}
				msg := err.Error()
				for _, want := range []string{path, "database is corrupt", "move perfbot.db", "to start a new store", filepath.Join(dir, "results")} {
					if !strings.Contains(msg, want) {
						t.Errorf("operation %d: error %q does not say %q", i, msg, want)
					}
				}
			}
			t.Logf("%v", errs[0])

			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Errorf("the corrupt database was changed: %d bytes before, %d after", len(before), len(after))
			}
		})
	}
}

// overwritePages overwrites every page of the database at path but the
// first with text, keeping its size.
func overwritePages(t *testing.T, path string, pageSize int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 4*pageSize {
		t.Fatalf("database of %d bytes is too small to damage", len(data))
	}
	for i := pageSize; i < len(data); i++ {
		data[i] = "garbage!"[i%8]
	}
	if err := os.WriteFile(path, data, 0o666); err != nil {
		t.Fatal(err)
	}
}

// setVersion sets the schema version of the closed database at path,
// as if an older perfbot had written it.
func setVersion(t *testing.T, path string, version int) {
	t.Helper()
	db, err := sql.Open("sqlite", store.DSN(path, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, version)); err != nil {
		t.Fatal(err)
	}
}

// readOnlyEnv names the store folder the child process of TestReadOnlyStore
// opens.
const readOnlyEnv = "PERFBOT_STORE_READONLY_DIR"

// TestReadOnlyChild is the child process of TestReadOnlyStore: it opens the
// store and prints the error.
func TestReadOnlyChild(t *testing.T) {
	dir := os.Getenv(readOnlyEnv)
	if dir == "" {
		t.Skip("helper process of TestReadOnlyStore")
	}
	s, err := store.Open(dir)
	if err == nil {
		s.Close()
	}
	fmt.Printf("read-only: %v\nerror: %v\n", errors.Is(err, store.ErrReadOnly), err)
}

// TestReadOnlyStore makes the database, the store folder or its results
// folder read-only and checks that Open says which one, and what to do. As
// root, whom permissions do not stop, it opens the store in a child process
// running as nobody.
func TestReadOnlyStore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// path is the file or folder made read-only, and mode its mode.
		path string
		mode os.FileMode
	}{
		{"database", "perfbot.db", 0o444},
		{"folder", ".", 0o555},
		{"results folder", "results", 0o555},
	}
	var bin string // the test binary, where nobody can run it
	if os.Geteuid() == 0 {
		bin = nobodyCopy(t)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), ".perfbot")
			s := open(t, dir)
			putRuns(t, s, "c", 1)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if bin != "" {
				giveToNobody(t, dir)
			}
			p := filepath.Join(dir, tt.path)
			if err := os.Chmod(p, tt.mode); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(p, 0o755) }) // so that TempDir can remove it

			var msg string
			var readOnly bool
			if bin == "" {
				s, err := store.Open(dir)
				if err == nil {
					s.Close()
				}
				msg, readOnly = fmt.Sprint(err), errors.Is(err, store.ErrReadOnly)
			} else {
				msg, readOnly = openAsNobody(t, bin, dir)
			}
			if !readOnly {
				t.Errorf("Open of a store with read-only %s: %s; want ErrReadOnly", tt.path, msg)
			}
			t.Log(msg)
			want := "store " + filepath.Clean(p) + " is read-only"
			for _, w := range []string{want, "make it writable", "another store folder"} {
				if !strings.Contains(msg, w) {
					t.Errorf("Open error %q does not say %q", msg, w)
				}
			}
		})
	}
}

// nobodyCopy copies the test binary into a folder where nobody (uid 65534)
// can run it, and returns its path.
func nobodyCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	traversable(t, dir)
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bin := filepath.Join(dir, "store.test")
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// traversable lets everyone reach tmp, a folder made by t.TempDir: it
// opens tmp and the per-test folder t.TempDir made it in, and nothing
// above.
func traversable(t *testing.T, tmp string) {
	t.Helper()
	parent := filepath.Dir(tmp)
	if !strings.HasPrefix(filepath.Base(parent), "Test") {
		t.Fatalf("%s is not in a per-test folder made by t.TempDir", tmp)
	}
	for _, d := range []string{tmp, parent} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// giveToNobody makes nobody own the store folder dir, made in a t.TempDir
// folder, and what it holds.
func giveToNobody(t *testing.T, dir string) {
	t.Helper()
	traversable(t, filepath.Dir(dir))
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, 65534, 65534)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// openAsNobody runs TestReadOnlyChild on dir as nobody and returns the
// error it printed and whether it was ErrReadOnly.
func openAsNobody(t *testing.T, bin, dir string) (msg string, readOnly bool) {
	t.Helper()
	cmd := exec.Command(bin, "-test.run=^TestReadOnlyChild$", "-test.count=1", "-test.v=false")
	cmd.Env = append(os.Environ(), readOnlyEnv+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		if errors.Is(err, syscall.EPERM) {
			t.Skipf("running as root, where permissions do not deny, and cannot run the check as nobody: %v", err)
		}
		t.Fatalf("child as nobody: %v\n%s", err, out)
	}
	text := string(out)
	ro, rest, ok := strings.Cut(text, "\n")
	if !ok || !strings.HasPrefix(ro, "read-only: ") {
		t.Fatalf("child as nobody printed %q", text)
	}
	msg, _, _ = strings.Cut(strings.TrimPrefix(rest, "error: "), "\n")
	return msg, ro == "read-only: true"
}
