// Package triage decides whether a performance change between two commits
// is real or an artifact of code or data alignment, with the experiments
// that show it.
//
// It works the way a 0-day engineer triages a report by hand: rebuild with
// forced alignment, rebuild under other layouts, pad the moved symbol back
// and see whether the old figure returns. [Run] takes a [Config] (the
// machine as a measure.Env, the job, the revisions as typed) and returns a
// [Result]: the [verdict.Verdict] and its sentence, each [Experiment] that ran (a
// [Column] per build, and for the layout sweep a [LayoutRow] per layout),
// the estimate across layouts ([Robust]) and the layout diff's top symbols
// ([Suspect]).
//
// [Run] reads the layout diff of the two builds (perfbot layout; no runs)
// and then runs, one look at a time and in the order the diff suggests,
// only the experiments that can still settle the verdict:
//
//   - plain: the two commits as they build (is there a change at all?),
//     in interleaved pairs. Builds whose artifacts (build.artifacts) are
//     byte-identical end the triage after its first look, as no change,
//     unless that look shows a difference.
//   - forced alignment: both commits rebuilt with functions and loops
//     aligned to 64 bytes. It equalises code alignment, not data: a change
//     it removes was text alignment; a change it keeps is a real change
//     when no data object moved in its cache line (or the data restore
//     keeps it too) and the layout sweep agrees.
//   - restore: the changed commit rebuilt so that the layout diff's top
//     suspect gets its old place back, measured beside both commits (the
//     seed's three columns); recovery of the base figure proves the cause.
//     Where the diff names the root change behind the suspect and the
//     preset can build with debug information, the rebuild is the seed's
//     own proof: a source patch (layout.SourcePatch, placed with a -g
//     rebuild's DWARF) that puts the root change's bytes back at its spot,
//     applied in the build's own worktree and checked with the layout diff
//     before it is measured (srcpatch.go); otherwise the preset's padding
//     (layout.ProposePadding). A data restore that keeps the change is,
//     with no moved function, evidence of a real change as forced
//     alignment's is; so is a text source patch with no moved data.
//   - layout sweep: both commits built under several layouts that move
//     code, data and stack together (knobs.Preset.Layouts), a few runs
//     each, with the layouts as a random factor ([stats.CompareLayouts]). A
//     change significant across layouts is real; it also weighs the
//     equalising experiments' changes, and grows (4 -> 8 -> 16 layouts)
//     when nothing else settles the verdict.
//
// A moved function puts forced alignment first; a moved data object with a
// restore padding puts the restore first, sharing its first rounds with
// the plain comparison; when nothing moved the sweep comes first. The rules
// are in rules.go. Every run goes through package measure, so it is stored
// at once and reused: a killed triage resumes where it stopped, and the
// triage's progress is kept in the store's state table.
//
// Failed runs (crashes, timeouts, a missing metric) are counted in every
// experiment's table, as lkp's fail:runs row. A build whose runs mostly
// fail ends the triage as inconclusive, naming it; builds that fail at
// different rates (one fails and the other never does, or their shares
// differ by 10 points) are named in the notes, and such a triage is never
// "no change".
//
// Error rates: the looks of each paired experiment (10, 20, 30, 40 runs a
// build) form a group-sequential test that spends the overall error of
// the doubling schedule 10 -> 20 -> 40 at Config.Alpha a look (2.5 % for
// the default 0.01) with a Pocock-type Lan-DeMets function
// ([stats.PlanSequential]); the sweep tests at Config.Alpha at each of its
// sizes. The simulations in the tests measure the false-positive and
// false-negative rates of the whole procedure.
package triage
