// Package report prints perfbot's results in the formats people already
// read: comparison tables, layout diffs, triages and bisections.
//
// A [compare.Table] prints as the 0-day robot's comparison table,
// benchstat's text, JSON, CSV or a Markdown table for pull-request
// comments: the sections below describe each. Package compare makes every
// decision (changed, significant, regression); this package only lays the
// figures out. [Write] picks the writer by [Options.Format]; [Summary]
// counts regressions and improvements for exit codes.
//
// The other writers take the other packages' results: [WriteLayoutText]
// and [WriteLayoutJSON] a [layout.DiffResult], [WriteTriage] a
// [triage.Result] (text, Markdown, JSON or a 0-day email) and
// [WriteBisect] a [BisectReport] around a [bisect.Result] (the same four).
//
// # ncompare (the default)
//
// The layout of lkp-tests' `ncompare` (lib/compare.rb), as in the 0-day
// regression emails, byte for byte:
//
//	800a83311219f2ca 0dd26047b0b803f7a196f0aee91
//	---------------- ---------------------------
//	         %stddev     %change         %stddev
//	             \          |                \
//	  96583240            -1.5%   95127283        unixbench.throughput
//	      0.37 ±  2%      +0.0        0.42 ±  2%  perf-stat.i.branch-miss-rate%
//
// Column labels are the commit ids cut to 16 (base) and 27 characters; like
// lkp, the header, dash and "\ | \" lines end in spaces. Values are means:
// %.2f when |x| < 1000, %.4g when |x| > 1e8, otherwise the integer part.
// " ±NNN%" is the relative population standard deviation, printed (as an
// integer, truncated) only when it is above 2 and there are two or more
// runs; so "±  2%" means a deviation in (2 %, 3 %). %change is
// [compare.Delta.Change]: "%+.1f%%" (or "%+.2g%%" from 100000 % on), and a
// difference in points without "%" for [compare.Row.Points] metrics. Rows
// are the changed ones ([compare.Row.Changed]) in table order, all rows with
// [Options.All]. When a column has failed runs, a failure section comes
// first, as lkp prints its failure stats:
//
//	1d2859b4fa79a8e2 609a86901e6fd886f1139aed8f8
//	---------------- ---------------------------
//	       fail:runs  %reproduction    fail:runs
//	           |             |             |
//	           :6           33%           2:6     perfbot.failed_runs
//	         %stddev     %change         %stddev
//	             \          |                \
//
// lkp's own stats are not reproduced here beyond this layout. Where lkp has
// quirks, perfbot deviates and says so: %reproduction divides each column's
// failures by its own run count (lkp divides by the previous column's,
// which printed "105%" in a 2024 report; equal run counts give the same
// figure); %stddev is relative to |mean| (lkp never prints it for negative
// means, and prints the raw deviation when the mean is 0, where perfbot
// prints none). A cell without samples prints "-" and its change is blank
// (lkp would print 0.00 and -100.0%); NaN and ±Inf print as "NaN", "+Inf",
// "-Inf".
//
// Below the table, a section that lkp does not have lists every significant
// statistical test ([stats.Comparison.Significant]) of the printed rows, one
// line per row and column, so that the table lines stay exactly lkp's:
//
//	significant changes (p < 0.05):
//	  6613d82e617d  regression  -7.9%, 95% CI [-9.1%, -6.7%], p=0.002, wilcoxon n=10  stress-ng.mutex.ops_per_sec
//
// The change there is the test's estimate ([stats.Comparison.Change], a
// Hodges-Lehmann shift in percent), not the difference of means above.
//
// # benchstat
//
// The text of golang.org/x/perf/cmd/benchstat, one table per unit, rows in
// table order, always all rows:
//
//	         │   old.txt    │               new.txt               │
//	         │     B/s      │     B/s       vs base               │
//	Encode-8   770.1Mi ± 2%   842.4Mi ± 2%  +9.38% (p=0.000 n=10)
//	Decode-8   575.3Mi ± 2%   577.9Mi ± 2%       ~ (p=0.579 n=10)
//	geomean    665.6Mi        697.7Mi       +4.83%
//
// The value is [stats.Summary.Median] scaled with golang.org/x/perf/benchunit
// (units tidied, "ns/op" becomes "sec/op"), "± N%" the larger distance from
// the median to [stats.Summary.Lo] or Hi in percent ("∞" when there are
// fewer than 6 samples, too few for a 95 % interval), the delta the change
// of medians or "~" when the test is not significant, then the p-value and
// sample sizes; warnings become numbered footnotes and a geomean row closes
// tables of two or more rows, all as benchstat lays them out. Differences:
// no configuration lines ("goos: linux") since a table has none; the test
// and its p-value are perfbot's (Wilcoxon signed-rank on paired tables,
// where benchstat always uses Mann-Whitney U); "~" means p >= alpha where
// benchstat's means p > alpha; a metric without a unit gets an empty unit
// header; no color.
//
// # json
//
// A [doc.Compare] (version 2), always with every row and one table per
// atomic job; docs/json.md is its contract and docs/schema/compare.json
// its schema. Numbers that are NaN, ±Inf or undefined (a summary of no
// samples, a missing comparison) are null. A summary is n, mean, median,
// stddev (population), rel_stddev (percent), min, max, ci_lo, ci_hi (the
// median's confidence interval), warnings (strings, omitted when none)
// and, in summaries[] only, samples (the values in run order, omitted
// when none). A comparison is column (its index), column_id, base and new
// (summaries without samples), change ([compare.Delta.Change]) and
// change_unit ("%" or "points"), stat_change, ci_lo, ci_hi and confidence
// (the test's estimate of the change in percent, its interval and the
// interval's coverage), p, test ("mann-whitney", "wilcoxon" or ""), n,
// significant, regression, improvement, lkp_changed, small (a
// significant change under the table's effect_pct, [compare.Table.EffectPct]:
// not counted in regressions; omitted when false) and warnings.
//
// # csv
//
// A header line, then one line per metric and non-base column (per metric
// alone when the table has one column) with the fields of the JSON
// comparison flattened: metric, unit, better, kpi, points, changed, column,
// column_id, variant, base_n, base_mean, base_median, base_stddev,
// base_rel_stddev, base_min, base_max, base_ci_lo, base_ci_hi, the same
// eight-plus-one new_ fields, change, change_unit, stat_change, ci_lo,
// ci_hi, confidence, p, test, n, significant, regression, improvement,
// lkp_changed, small, unchanged (why the column was not measured: its
// diff touches only ignored paths; empty when measured) and identical
// (its artifacts are byte-identical to the base's). Numbers use the
// shortest exact form (strconv 'g'); undefined
// numbers and NaN are empty, infinities are "+Inf" and "-Inf"; booleans are
// "true" and "false".
//
// # markdown
//
// A GitHub-flavoured comment: a summary line ("**1 regression**, 2
// improvements, 40 unchanged"), the failed runs if any, then per compared
// column a table metric | base | new | change | 95% CI | p of the changed
// rows (all with [Options.All]). Base and new are lkp-style means with
// "±N%"; significant regressions are in bold and say "regression",
// significant improvements say "improvement", and a significant change
// under the table's EffectPct says "small regression" (or "small
// improvement"), is not bold and is counted apart in the summary line.
// ncompare lists such a change as "small" under the table.
package report
