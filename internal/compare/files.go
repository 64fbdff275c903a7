package compare

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/perfbot/perfbot/internal/metric"
)

// Files are result files to compare as benchstat does: nothing measured,
// one column per distinct value of Col (by default one per file, the first
// the base), unpaired.
type Files struct {
	// Paths are the files; "-" is Stdin, at most once.
	Paths []string
	Stdin io.Reader
	// Filter, Row, Col and Ignore are benchstat's -filter, -row, -col and
	// -ignore (golang.org/x/perf/benchproc syntax); "" is benchstat's
	// default ("*", ".fullname", ".file", none).
	Filter, Row, Col, Ignore string
	// Alpha is each row's test level (0: DefaultAlpha).
	Alpha float64
}

// StdinName is the path that reads standard input.
const StdinName = "-"

// FromFiles reads the files (in parallel: parsing is most of the work),
// each in the format its content shows (metric.ReadResultFile), and
// compares them. The files' warnings (malformed lines, results whose
// other keys differ within a cell) come back beside the table.
//
// A file without a single result is an error that names it (an empty
// file, the output of another program), and so is a comparison in which
// the filter keeps nothing or no row of the base column has values in
// another column: either would otherwise be an empty table, read as "no
// regression".
func FromFiles(in Files) (*Table, []error, error) {
	pr, err := parseProjections(in)
	if err != nil {
		return nil, nil, err
	}
	files, err := readFiles(in)
	if err != nil {
		return nil, nil, err
	}
	g := newGrouping(pr)
	for _, rf := range files {
		g.warnings = append(g.warnings, rf.Warnings...)
		for _, r := range rf.Results {
			g.add(rf, r)
		}
	}
	cols, series, err := g.finish(in)
	if err != nil {
		return nil, nil, err
	}
	return Build(cols, series, false, in.Alpha), g.warnings, nil
}

// readFiles reads and detects every file, naming each that fails.
func readFiles(in Files) ([]*metric.ResultFile, error) {
	files := make([]*metric.ResultFile, len(in.Paths))
	errs := make([]error, len(in.Paths))
	stdin := -1
	for i, p := range in.Paths {
		if p != StdinName {
			continue
		}
		if stdin >= 0 {
			return nil, fmt.Errorf("%s given twice: standard input is read once", StdinName)
		}
		stdin = i
		if in.Stdin == nil {
			return nil, fmt.Errorf("%s: no standard input to read", StdinName)
		}
		data, err := io.ReadAll(in.Stdin)
		if err != nil {
			return nil, fmt.Errorf("%s: reading standard input: %v", StdinName, err)
		}
		files[i], errs[i] = metric.ReadResultFile(data, StdinName)
	}
	var wg sync.WaitGroup
	for i, p := range in.Paths {
		if i == stdin {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			data, err := os.ReadFile(p)
			if err != nil {
				errs[i] = err
				return
			}
			files[i], errs[i] = metric.ReadResultFile(data, p)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return files, nil
}

// checkShared is an error when no series has values in the base column
// and in another one: nothing would be compared.
func checkShared(cols []Column, series []Series, in Files) error {
	if len(cols) < 2 {
		return fmt.Errorf("one column (%s): nothing to compare; give another file, or a --col that splits this one", cols[0].ID)
	}
	for _, s := range series {
		if len(s.Samples[0]) == 0 {
			continue
		}
		for _, col := range s.Samples[1:] {
			if len(col) > 0 {
				return nil
			}
		}
	}
	ids := make([]string, len(cols)-1)
	for i, c := range cols[1:] {
		ids[i] = c.ID
	}
	return fmt.Errorf("no benchmark of %s appears in %s: nothing to compare (the names, units and file configuration lines must match)",
		cols[0].ID, strings.Join(ids, ", "))
}
