package history

import "sync"

// Memo keeps the steps Build computed, so that a history rebuilt after a
// watch cycle (perfbot serve rebuilds it for every page) compares only the
// commits tested since: a point's step is a function of the runs of the
// commit and its reference in the rounds the commit was tested in, which
// are final once it is recorded as tested (a commit tested again gets new
// rounds, and so a new entry). A Memo serves one store; it is safe for
// concurrent use. The zero Memo is ready; a nil *Memo keeps nothing.
type Memo struct {
	mu sync.Mutex
	m  map[memoKey]*stepStats
}

// memoKey names one comparison of a tested commit with its reference.
type memoKey struct {
	job, variant, commit, ref, session, rounds string
	alpha                                      float64
}

// stepStats is one comparison's outcome for every metric; nil in the memo
// when the commit has no successful run in its rounds.
type stepStats struct {
	ref  string // the reference used: "" when it had no successful run
	rows map[string]rowStats
}

// rowStats is one metric of a comparison: the commit's runs and median
// with its interval, the reference's median, and the paired test's
// estimate, interval and p.
type rowStats struct {
	runs                       int
	median, medianLo, medianHi float64
	refMedian                  float64
	delta                      bool // the test ran (both sides have values)
	change, p, lo, hi          float64
	tp                         float64 // Welch's t-test on the logs (Point.TP)
}

func (m *Memo) get(k memoKey) (*stepStats, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.m[k]
	return s, ok
}

func (m *Memo) put(k memoKey, s *stepStats) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[memoKey]*stepStats{}
	}
	m.m[k] = s
}

// Len is the number of comparisons the memo holds.
func (m *Memo) Len() int {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}
