package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"

	"github.com/perfbot/perfbot/internal/compare"
)

// JobTable is the comparison of one atomic job of a params matrix.
type JobTable struct {
	Name  string // the atomic job's name
	Key   string // its job key
	Table *compare.Table
}

// WriteJobs writes the tables of several atomic jobs as one report: the
// text formats one after another under a "job:" line, json as one
// [doc.Compare] with a table per job (the same shape for one job), csv as
// one table with a leading job column, so that machines can still read the
// output as one. One job is written in the other formats as Write writes
// its table.
func WriteJobs(w io.Writer, jobs []JobTable, opt Options) error {
	switch opt.Format {
	case FormatJSON:
		return writeCompareJSON(w, jobs)
	case FormatBMF:
		return writeJobsBMF(w, jobs)
	}
	if len(jobs) == 1 {
		return Write(w, jobs[0].Table, opt)
	}
	for i, j := range jobs {
		var buf bytes.Buffer
		if err := Write(&buf, j.Table, opt); err != nil {
			return err
		}
		var err error
		switch opt.Format {
		case FormatCSV:
			err = writeCSVWithJob(w, buf.Bytes(), j.Name, i == 0)
		default:
			fmt.Fprintf(w, "job: %s\n\n", j.Name)
			_, err = w.Write(buf.Bytes())
			fmt.Fprintln(w)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeCSVWithJob copies a CSV report with a leading "job" column; the
// header line is written only for the first job.
func writeCSVWithJob(w io.Writer, data []byte, name string, header bool) error {
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	for i, rec := range recs {
		if i == 0 && !header {
			continue
		}
		first := name
		if i == 0 {
			first = "job"
		}
		if err := cw.Write(append([]string{first}, rec...)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
