// Package storetest is a conformance suite for perfbot's results store: the
// behaviour every store backend (the SQLite folder and the PostgreSQL
// database of package store) must have, run against a real, fresh database
// per test.
package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/store"
)

// Store is the method set of a results store, as *store.Store implements it.
type Store interface {
	PutBuild(ctx context.Context, b *store.BuildRecord) error
	GetBuild(ctx context.Context, key string) (*store.BuildRecord, error)
	PutJob(ctx context.Context, key, name string, spec []byte) error
	GetJob(ctx context.Context, key string) (name string, spec []byte, err error)
	JobKeys(ctx context.Context) ([]string, error)
	PutRun(ctx context.Context, r *store.RunRecord) error
	Runs(ctx context.Context, job, commit, variant string) ([]store.RunRecord, error)
	RunsWithoutValues(ctx context.Context, job, commit, variant string) ([]store.RunRecord, error)
	Samples(ctx context.Context, job string, commits []string, variant string) (map[string]map[string][]store.Sample, error)
	Metrics(ctx context.Context, job string) ([]store.MetricInfo, error)
	PutState(ctx context.Context, kind, key string, data []byte) error
	GetState(ctx context.Context, kind, key string) ([]byte, error)
	DeleteState(ctx context.Context, kind, key string) error
	StateKeys(ctx context.Context, kind string) ([]string, error)
	PutTested(ctx context.Context, t *store.Tested) error
	TestedCommits(ctx context.Context, job, variant string) (map[string]store.Tested, error)
	TestedVariants(ctx context.Context, job string) ([]string, error)
	TestedVersion(ctx context.Context, job, variant string) (int, time.Time, error)
	PutFinding(ctx context.Context, culprit string, data []byte) (bool, error)
	Finding(ctx context.Context, culprit string) (*store.FindingRecord, error)
	Findings(ctx context.Context) ([]store.FindingRecord, error)
	SetFindingState(ctx context.Context, culprit string, state store.FindingState, reason string) error
	WithdrawFinding(ctx context.Context, culprit string) error
	MarkSent(ctx context.Context, culprit, messageID string, to []string) error
	Created() bool
	Close() error
}

// Backend is one kind of store under test.
type Backend struct {
	// Fresh returns where a new, empty store can be opened: a folder,
	// a database URL. The first Open of it creates the store; later
	// Opens of it, by the same test, open the same store.
	Fresh func(t *testing.T) string
	// Open opens the store at where. The suite closes it.
	Open func(ctx context.Context, t *testing.T, where string) (Store, error)
}

// open opens the store at where, closed when t ends.
func (b Backend) open(t *testing.T, where string) Store {
	t.Helper()
	s, err := b.Open(t.Context(), t, where)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

var _ Store = (*store.Store)(nil)

// Exercise runs the suite as parallel subtests of t, each on a fresh store
// of b.
func Exercise(t *testing.T, b Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s Store)
	}{
		{"BuildRoundTrip", testBuildRoundTrip},
		{"BuildInvalid", testBuildInvalid},
		{"Job", testJob},
		{"RunRoundTrip", testRunRoundTrip},
		{"RunReplace", testRunReplace},
		{"RunInvalid", testRunInvalid},
		{"SamplesOKOnly", testSamplesOKOnly},
		{"MachineAndSession", testMachineAndSession},
		{"Version", testVersion},
		{"Metrics", testMetrics},
		{"State", testState},
		{"ConcurrentReaders", testConcurrentReaders},
		{"Tested", testTested},
		{"Findings", testFindings},
		{"KeyOrder", testKeyOrder},
		{"TextRefused", testTextRefused},
		{"MailOutbox", testMailOutbox},
		{"WatchState", testWatchState},
		{"Cycles", testCycles},
		{"Qualifications", testQualifications},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, b.open(t, b.Fresh(t)))
		})
	}
	// Cases of several Stores on one database.
	for _, tt := range []struct {
		name string
		fn   func(t *testing.T, b Backend)
	}{
		{"ConcurrentOpen", testConcurrentOpen},
		{"ConcurrentPutRun", testConcurrentPutRun},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, b)
		})
	}
}

// when is a start time with nanoseconds in a non-UTC zone, to catch lossy
// time storage.
var when = time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.FixedZone("UTC+1", 3600))

func sameTime(a, b time.Time) bool { return a.Equal(b) && a.IsZero() == b.IsZero() }

func testBuildRoundTrip(t *testing.T, s Store) {
	ctx := t.Context()
	want := store.BuildRecord{
		Key:         "bkey1",
		Commit:      "0123456789abcdef0123456789abcdef01234567",
		Variant:     "align64",
		Status:      store.BuildOK,
		ArtifactDir: "/x/.perfbot/builds/bkey1",
		LogPath:     "/x/.perfbot/builds/bkey1/build.log",
		Started:     when,
		Duration:    90*time.Second + 7,
	}
	if err := s.PutBuild(ctx, &want); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetBuild(ctx, want.Key)
	if err != nil {
		t.Fatal(err)
	}
	checkBuild(t, got, &want)

	// Upsert by key; a zero start time stays zero.
	want.Status, want.Error, want.Started, want.Variant = store.BuildFailed, "exit status 2", time.Time{}, ""
	if err := s.PutBuild(ctx, &want); err != nil {
		t.Fatal(err)
	}
	if got, err = s.GetBuild(ctx, want.Key); err != nil {
		t.Fatal(err)
	}
	checkBuild(t, got, &want)

	_, err = s.GetBuild(ctx, "nosuchkey")
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetBuild(nosuchkey) = %v, want ErrNotFound", err)
	}
}

func checkBuild(t *testing.T, got, want *store.BuildRecord) {
	t.Helper()
	if !sameTime(got.Started, want.Started) {
		t.Errorf("build Started = %v, want %v", got.Started, want.Started)
	}
	g, w := *got, *want
	g.Started, w.Started = time.Time{}, time.Time{}
	if g != w {
		t.Errorf("build = %+v, want %+v", g, w)
	}
}

func testBuildInvalid(t *testing.T, s Store) {
	ctx := t.Context()
	for _, b := range []store.BuildRecord{
		{Key: "", Commit: "c", Status: store.BuildOK},
		{Key: "k1", Commit: "", Status: store.BuildOK},
		{Key: "k2", Commit: "c", Status: "maybe"},
	} {
		if err := s.PutBuild(ctx, &b); err == nil {
			t.Errorf("PutBuild(%+v) succeeded, want an error", b)
		}
		if _, err := s.GetBuild(ctx, b.Key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("after a failed PutBuild, GetBuild(%q) = %v, want ErrNotFound", b.Key, err)
		}
	}
}

func testJob(t *testing.T, s Store) {
	ctx := t.Context()
	spec := []byte(`{"name":"sort","run":{"command":"./bench"}}`)
	if err := s.PutJob(ctx, "jkey", "sort", spec); err != nil {
		t.Fatal(err)
	}
	name, got, err := s.GetJob(ctx, "jkey")
	if err != nil {
		t.Fatal(err)
	}
	if name != "sort" || string(got) != string(spec) {
		t.Errorf("GetJob = %q, %s; want sort, %s", name, got, spec)
	}
	spec2 := []byte(`{"name":"sort2"}`)
	if err := s.PutJob(ctx, "jkey", "sort2", spec2); err != nil {
		t.Fatal(err)
	}
	if name, got, err = s.GetJob(ctx, "jkey"); err != nil || name != "sort2" || string(got) != string(spec2) {
		t.Errorf("after replacing, GetJob = %q, %s, %v; want sort2, %s", name, got, err, spec2)
	}
	if _, _, err := s.GetJob(ctx, "other"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetJob(other) = %v, want ErrNotFound", err)
	}
	if err := s.PutJob(ctx, "bad", "bad", []byte(`{"name":`)); err == nil {
		t.Error("PutJob with invalid JSON succeeded")
	}
	if err := s.PutJob(ctx, "", "x", []byte(`{}`)); err == nil {
		t.Error("PutJob with empty key succeeded")
	}
	if err := s.PutJob(ctx, "akey", "alpha", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if keys, err := s.JobKeys(ctx); err != nil || !slices.Equal(keys, []string{"akey", "jkey"}) {
		t.Errorf("JobKeys = %v, %v; want [akey jkey], sorted, each once", keys, err)
	}
}

func testState(t *testing.T, s Store) {
	ctx := t.Context()
	if _, err := s.GetState(ctx, "bisect", "s1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetState of a missing state = %v, want ErrNotFound", err)
	}
	put := func(kind, key, data string) {
		t.Helper()
		if err := s.PutState(ctx, kind, key, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	put("bisect", "s2", `{"good":"a"}`)
	put("bisect", "s1", `{"good":"b"}`)
	put("triage", "s1", "")
	put("bisect", "s2", `{"good":"c"}`)
	check := func(kind, key, want string) {
		t.Helper()
		got, err := s.GetState(ctx, kind, key)
		if err != nil || string(got) != want {
			t.Errorf("GetState(%s, %s) = %q, %v; want %q", kind, key, got, err, want)
		}
	}
	check("bisect", "s1", `{"good":"b"}`)
	check("bisect", "s2", `{"good":"c"}`)
	check("triage", "s1", "")
	if keys, err := s.StateKeys(ctx, "bisect"); err != nil || !slices.Equal(keys, []string{"s1", "s2"}) {
		t.Errorf("StateKeys(bisect) = %v, %v; want [s1 s2]", keys, err)
	}
	if err := s.DeleteState(ctx, "bisect", "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetState(ctx, "bisect", "s1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetState after DeleteState = %v, want ErrNotFound", err)
	}
	check("triage", "s1", "")
	if err := s.DeleteState(ctx, "bisect", "s1"); err != nil {
		t.Errorf("deleting a missing state: %v", err)
	}
	if keys, err := s.StateKeys(ctx, "bisect"); err != nil || !slices.Equal(keys, []string{"s2"}) {
		t.Errorf("StateKeys(bisect) after delete = %v, %v; want [s2]", keys, err)
	}
}
