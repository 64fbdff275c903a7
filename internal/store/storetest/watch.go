package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/store"
)

// testTested: tested commits round-trip per job and variant, and
// re-putting one replaces it.
func testTested(t *testing.T, s Store) {
	ctx := context.Background()
	a := &store.Tested{Job: "j", Commit: "c1", Branch: "main", Session: "s1", Rounds: []int{1, 2, 3}, Cycle: 1, When: when,
		Layout: json.RawMessage(`{"text":4096}`)}
	b := &store.Tested{Job: "j", Commit: "c2", Branch: "main", Ref: "c1", Session: "s2", Rounds: []int{4, 5}, Cycle: 2, When: when}
	forced := &store.Tested{Job: "j", Variant: "align64@x", Commit: "c1", Session: "s3", Rounds: []int{1}, When: when}
	for _, x := range []*store.Tested{a, b, forced} {
		if err := s.PutTested(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.TestedCommits(ctx, "j", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["c2"].Ref != "c1" || !slices.Equal(got["c1"].Rounds, []int{1, 2, 3}) ||
		string(got["c1"].Layout) != `{"text":4096}` || got["c2"].Layout != nil || !sameTime(got["c1"].When, when) {
		t.Errorf("tested commits %+v", got)
	}
	n, last, err := s.TestedVersion(ctx, "j", "")
	if err != nil || n != 2 || !sameTime(last, when) {
		t.Errorf("TestedVersion = %d, %v, %v; want 2 commits, %v", n, last, err, when)
	}
	b.Session, b.Rounds, b.When = "s4", []int{6}, when.Add(time.Minute)
	if err := s.PutTested(ctx, b); err != nil {
		t.Fatal(err)
	}
	if n, later, err := s.TestedVersion(ctx, "j", ""); err != nil || n != 2 || !later.After(last) {
		t.Errorf("after testing a commit again, TestedVersion = %d, %v, %v; want 2 and a later time than %v", n, later, err, last)
	}
	got, _ = s.TestedCommits(ctx, "j", "")
	if got["c2"].Session != "s4" {
		t.Errorf("replaced tested commit: %+v", got["c2"])
	}
	if got, _ := s.TestedCommits(ctx, "j", "align64@x"); len(got) != 1 {
		t.Errorf("variant's tested commits: %v", got)
	}
	if vs, err := s.TestedVariants(ctx, "j"); err != nil || !slices.Equal(vs, []string{"", "align64@x"}) {
		t.Errorf("TestedVariants = %q, %v; want the plain history and align64@x", vs, err)
	}
	if vs, err := s.TestedVariants(ctx, "other"); err != nil || len(vs) != 0 {
		t.Errorf("TestedVariants of a job without history = %q, %v", vs, err)
	}
}

// testFindings: one finding per culprit; re-putting keeps the state a
// person set and the sent mail, and clears a withdrawal.
func testFindings(t *testing.T, s Store) {
	ctx := context.Background()
	created, err := s.PutFinding(ctx, "c1", []byte(`{"v":1}`))
	if err != nil || !created {
		t.Fatalf("first put: created %v, err %v", created, err)
	}
	if err := s.SetFindingState(ctx, "c1", store.Dismissed, ""); err == nil {
		t.Error("dismissed without a reason")
	}
	if err := s.SetFindingState(ctx, "c1", store.Dismissed, "alignment, known"); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkSent(ctx, "c1", "<m1@perfbot>", []string{"a@x"}); err != nil {
		t.Fatal(err)
	}
	if err := s.WithdrawFinding(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	created, err = s.PutFinding(ctx, "c1", []byte(`{"v":2}`))
	if err != nil || created {
		t.Fatalf("second put: created %v, err %v", created, err)
	}
	f, err := s.Finding(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if f.State != store.Dismissed || f.Reason != "alignment, known" || f.Withdrawn || string(f.Data) != `{"v":2}` ||
		f.MessageID != "<m1@perfbot>" || !slices.Equal(f.SentTo, []string{"a@x"}) {
		t.Errorf("finding %+v", f)
	}
	if _, err := s.Finding(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing finding: %v", err)
	}
	if err := s.SetFindingState(ctx, "nope", store.Acknowledged, ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("state of a missing finding: %v", err)
	}
	if err := s.SetFindingState(ctx, "c1", "closed", ""); err == nil {
		t.Error("unknown state accepted")
	}
	s.PutFinding(ctx, "c2", []byte(`{}`))
	if all, _ := s.Findings(ctx); len(all) != 2 {
		t.Errorf("%d findings, want 2", len(all))
	}
}
