package testutil

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// PostgresEnv names an existing PostgreSQL server for the tests (a
// postgres:// URL of a role that may create databases). When it is unset,
// [Postgres] starts a private server of its own.
const PostgresEnv = "PERFBOT_TEST_POSTGRES"

// PostgresDurableEnv, when set (to anything), keeps PostgreSQL's durable
// defaults on the private server: fsync, full-page writes and synchronous
// commits, which it otherwise turns off to spare the tests the disk. Set
// it for benchmarks that time commits.
const PostgresDurableEnv = "PERFBOT_TEST_POSTGRES_DURABLE"

// pgServer is the test process's one PostgreSQL server.
type pgServer struct {
	once    sync.Once
	err     error
	base    string    // URL of the server's maintenance database
	dir     string    // data, socket and log, removed by StopPostgres
	cmd     *exec.Cmd // nil for a server named by PostgresEnv
	running chan struct{}
	n       atomic.Int64
}

var pg pgServer

// Postgres returns the URL (postgres://...) of a new, empty database on a
// real PostgreSQL server, for tb alone. The first call starts the server:
// the one PERFBOT_TEST_POSTGRES names, or a private one that initdb sets up
// in a temporary folder and that listens on a free loopback port, run as an
// unprivileged user when the tests run as root (PostgreSQL refuses root).
// Later calls, from any test of the process, share that server. A test
// binary that calls Postgres should stop the server in TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testutil.RunWithPostgres(m)) }
//
// and the server also stops by itself when the test process dies. When
// PostgreSQL is not installed, Postgres skips tb, or fails it in strict
// mode (CI installs the Debian package postgresql).
func Postgres(tb testing.TB) string {
	tb.Helper()
	NeedTool(tb, "postgres")
	pg.once.Do(func() { pg.err = pg.start() })
	if pg.err != nil {
		tb.Fatalf("starting PostgreSQL for the tests: %v", pg.err)
	}
	name := fmt.Sprintf("t%d_%d", os.Getpid(), pg.n.Add(1))
	db, err := sql.Open("pgx", pg.base)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("creating database %s: %v", name, err)
	}
	return withDatabase(pg.base, name)
}

// RunWithPostgres runs the tests of m, then stops the private PostgreSQL
// server if one was started, and returns m.Run's exit code.
func RunWithPostgres(m *testing.M) int {
	code := m.Run()
	StopPostgres()
	return code
}

// StopPostgres stops the private server (fast shutdown) and removes its
// folder. It does nothing when none was started.
func StopPostgres() {
	if pg.cmd == nil || pg.cmd.Process == nil {
		return
	}
	pg.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-pg.running:
	case <-time.After(30 * time.Second):
		pg.cmd.Process.Kill()
		<-pg.running
	}
	os.RemoveAll(pg.dir)
	pg.cmd = nil
}

// withDatabase returns base with its database replaced by name.
func withDatabase(base, name string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	u.Path = "/" + name
	return u.String()
}

func (s *pgServer) start() error {
	if env := os.Getenv(PostgresEnv); env != "" {
		s.base = env
		return s.ping()
	}
	bin, err := postgresBin()
	if err != nil {
		return err
	}
	removeStale()
	dir, err := os.MkdirTemp("", "perfbot-pg-")
	if err != nil {
		return err
	}
	s.dir = dir
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		uid, gid, err := unprivileged()
		if err != nil {
			return err
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return err
		}
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "perfbot", "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	log := &bytes.Buffer{}
	args := []string{"-D", data, "-k", dir, "-p", strconv.Itoa(port), "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"}
	if os.Getenv(PostgresDurableEnv) == "" {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), args...)
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = log, log
	s.running = make(chan struct{})
	// The server dies with the test process: Pdeathsig is tied to the
	// thread that starts it, so that thread is locked and never returns.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGINT, Setpgid: true}
		err := s.cmd.Start()
		started <- err
		if err != nil {
			close(s.running)
			return
		}
		s.cmd.Wait()
		close(s.running)
		select {} // keep the thread, and with it the death signal, alive
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("starting postgres: %v", err)
	}
	s.base = fmt.Sprintf("postgres://perfbot@127.0.0.1:%d/postgres?sslmode=disable", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := s.ping()
		if err == nil {
			return nil
		}
		select {
		case <-s.running:
			return fmt.Errorf("postgres exited: %s", log.String())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not accept connections within 60s: %v\n%s", err, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *pgServer) ping() error {
	db, err := sql.Open("pgx", s.base)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// postgresBin finds the folder of PostgreSQL's server programs: Debian's
// package keeps them in /usr/lib/postgresql/VERSION/bin, off PATH.
func postgresBin() (string, error) {
	if p, err := exec.LookPath("postgres"); err == nil {
		if _, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) > pgVersion(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("no postgres and initdb on PATH or under /usr/lib/postgresql/*/bin (Debian package postgresql)")
}

func pgVersion(bin string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return v
}

// postgresPresent is NeedTool's presence check for the server programs.
func postgresPresent() error {
	_, err := postgresBin()
	return err
}

// unprivileged returns the user a root test process runs PostgreSQL as:
// postgres (Debian's package creates it), else nobody.
func unprivileged() (uid, gid int, err error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return uid, gid, nil
	}
	return 0, 0, fmt.Errorf("running as root, and neither user postgres nor nobody exists to run PostgreSQL as")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// removeStale removes the folders of private servers whose test process
// was killed (the server itself stops with it): older than ten minutes and
// with no live postmaster.
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "perfbot-pg-*"))
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil || time.Since(fi.ModTime()) < 10*time.Minute {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(d, "data", "postmaster.pid")); err == nil {
			line, _, _ := bytes.Cut(b, []byte("\n"))
			if pid, err := strconv.Atoi(string(line)); err == nil && syscall.Kill(pid, 0) == nil {
				continue
			}
		}
		os.RemoveAll(d)
	}
}
