package watch

import (
	"fmt"
	"slices"
	"testing"

	"github.com/perfbot/perfbot/internal/gitrev"
)

func commits(n int) []gitrev.Commit {
	out := make([]gitrev.Commit, n)
	for i := range out {
		out[i] = gitrev.Commit{Hash: fmt.Sprintf("c%02d", i)}
	}
	return out
}

func hashes(cs []gitrev.Commit) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Hash)
	}
	return out
}

func TestChoose(t *testing.T) {
	list := commits(10)
	for _, tc := range []struct {
		name   string
		tested []string
		policy TestPolicy
		max    int
		ref    string
		want   []string
	}{
		{"first cycle: the head", nil, TestPolicy{Every: 1}, 20, "", []string{"c09"}},
		{"every", []string{"c05"}, TestPolicy{Every: 1}, 20, "c05", []string{"c06", "c07", "c08", "c09"}},
		{"every-2 keeps the head", []string{"c04"}, TestPolicy{Every: 2}, 20, "c04", []string{"c06", "c08", "c09"}},
		{"heads", []string{"c02"}, TestPolicy{Heads: true}, 20, "c02", []string{"c09"}},
		{"cap thins, keeps the head", []string{"c00"}, TestPolicy{Every: 1}, 3, "c00", []string{"c03", "c06", "c09"}},
		{"nothing new", []string{"c09"}, TestPolicy{Every: 1}, 20, "c09", nil},
		{"force-push: newest tested still on the branch", []string{"c03", "gone"}, TestPolicy{Every: 1}, 2, "c03", []string{"c06", "c09"}},
	} {
		tested := map[string]bool{}
		for _, h := range tc.tested {
			tested[h] = true
		}
		sel := choose(list, known{tested: tested}, tc.policy, tc.max)
		if sel.Ref.Hash != tc.ref || !slices.Equal(hashes(sel.New), tc.want) {
			t.Errorf("%s: ref %q new %v; want %q %v", tc.name, sel.Ref.Hash, hashes(sel.New), tc.ref, tc.want)
		}
	}
}
