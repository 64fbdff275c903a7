package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/store"
)

// The suite's cases for the strings a store keeps.

// testKeyOrder checks that keys sort bytewise, as Go sorts strings, not in
// the order of a locale (which would put "a" before "B", or ignore "-").
func testKeyOrder(t *testing.T, s Store) {
	ctx := t.Context()
	keys := []string{"b", "B", "a", "_x", "ä", "Z9", "a b", "a-b", "ab", "a"}
	for _, k := range keys {
		if err := s.PutState(ctx, "order", k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	want := slices.Compact(slices.Sorted(slices.Values(keys)))
	if got, err := s.StateKeys(ctx, "order"); err != nil || !slices.Equal(got, want) {
		t.Errorf("StateKeys = %q, %v; want %q (bytewise)", got, err, want)
	}
}

// testTextRefused checks that strings one of the databases cannot keep as
// they are (invalid UTF-8, NUL bytes) are refused by every store, with an
// error naming the field, and that nothing of the record is stored.
func testTextRefused(t *testing.T, s Store) {
	ctx := t.Context()
	for field, breakIt := range map[string]func(r *store.RunRecord){
		"machine":     func(r *store.RunRecord) { r.Machine = "bench-\xff" },
		"version":     func(r *store.RunRecord) { r.Version = "devel\x00" },
		"reason":      func(r *store.RunRecord) { r.Reason = "exit\x00status 1" },
		"metric name": func(r *store.RunRecord) { r.Values[1].Name = "t\xc3" },
		"unit":        func(r *store.RunRecord) { r.Values[0].Unit = "n\x00s" },
		"commit":      func(r *store.RunRecord) { r.Commit = "c1\xfe" },
	} {
		r := run("job", "c1", "", 1, "a", "b")
		breakIt(r)
		err := s.PutRun(ctx, r)
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("PutRun with a bad %s: %v; want an error naming the %s", field, err, field)
		}
	}
	if runs, err := s.Runs(ctx, "job", "c1", ""); err != nil || len(runs) != 0 {
		t.Errorf("after refused PutRuns, Runs = %v, %v; want none", runs, err)
	}
	if ms, err := s.Metrics(ctx, "job"); err != nil || len(ms) != 0 {
		t.Errorf("after refused PutRuns, Metrics = %v, %v; want none", ms, err)
	}

	b := &store.BuildRecord{Key: "k", Commit: "c1", Status: store.BuildFailed, Error: "cc: \xff"}
	if err := s.PutBuild(ctx, b); err == nil || !strings.Contains(err.Error(), `error "cc: `) {
		t.Errorf("PutBuild with invalid UTF-8 in its error: %v; want an error naming the error", err)
	}
	if _, err := s.GetBuild(ctx, "k"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after a refused PutBuild, GetBuild = %v, want ErrNotFound", err)
	}
	if err := s.PutState(ctx, "bisect", "s\x00", []byte("\x00\xff binary data is fine")); err == nil || !strings.Contains(err.Error(), "key") {
		t.Errorf("PutState with a NUL in its key: %v; want an error naming the key", err)
	}
	if err := s.PutState(ctx, "bisect", "s1", []byte("\x00\xff")); err != nil {
		t.Errorf("PutState with binary data: %v", err)
	}
	if data, err := s.GetState(ctx, "bisect", "s1"); err != nil || string(data) != "\x00\xff" {
		t.Errorf("GetState of binary data = %q, %v", data, err)
	}
	if keys, err := s.StateKeys(ctx, "bisect"); err != nil || !slices.Equal(keys, []string{"s1"}) {
		t.Errorf("StateKeys = %q, %v; want [s1]", keys, err)
	}
	if err := s.PutJob(ctx, "jkey", "name\xff", []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "name") {
		t.Errorf("PutJob with invalid UTF-8 in its name: %v", err)
	}
	if _, err := s.PutFinding(ctx, "c1", []byte("{\"x\":\"\xff\"}")); err == nil || !strings.Contains(err.Error(), "data") {
		t.Errorf("PutFinding with invalid UTF-8 in its data: %v", err)
	}
	if fs, err := s.Findings(ctx); err != nil || len(fs) != 0 {
		t.Errorf("after a refused PutFinding, Findings = %v, %v", fs, err)
	}
}
