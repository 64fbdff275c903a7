// Package stats decides whether two sets of benchmark samples differ.
//
// It gives, side by side, the rule the 0-day robot uses (lkp's "changed"
// test, [LKPChanged]) and real statistical tests with a confidence interval
// of the change: Mann-Whitney U (through golang.org/x/perf/benchmath) for
// unpaired samples, and the Wilcoxon signed-rank test with a Hodges-Lehmann
// interval for interleaved pairs. Results carry warnings as data (too few
// samples, noisy samples), in the manner of benchmath.
package stats

// Summary describes one sample the way lkp ncompare and benchstat print it.
type Summary struct {
	N      int
	Mean   float64
	Stddev float64 // population standard deviation (lkp's %stddev uses it)
	// RelStddev is 100*Stddev/Mean (the "%stddev" column), 0 when Mean is 0.
	RelStddev float64
	Median    float64
	Min, Max  float64
	// Lo and Hi bound the median's confidence interval (benchmath
	// AssumeNothing); both equal Median when N is too small.
	Lo, Hi float64
}

// Comparison is the statistical comparison of a new sample against a base.
type Comparison struct {
	Test string // "mann-whitney", "wilcoxon" or "" when none could run
	N    int    // samples per side (unpaired: min of both) or pairs (paired)
	P    float64
	// Change is the estimated relative change in percent (Hodges-Lehmann on
	// log values when all values are positive), and [Lo, Hi] its confidence
	// interval at the comparison's confidence level.
	Change, Lo, Hi float64
	Alpha          float64
	Significant    bool // P < Alpha
	Warnings       []error
}
