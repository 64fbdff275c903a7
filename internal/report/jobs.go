package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
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
// text formats one after another under a "job:" line, json as one document
// with a jobs array, csv as one table with a leading job column, so that
// machines can still read the output as one. One job is written as Write
// writes its table.
func WriteJobs(w io.Writer, jobs []JobTable, opt Options) error {
	if len(jobs) == 1 {
		return Write(w, jobs[0].Table, opt)
	}
	var docs []json.RawMessage
	for i, j := range jobs {
		var buf bytes.Buffer
		if err := Write(&buf, j.Table, opt); err != nil {
			return err
		}
		var err error
		switch opt.Format {
		case "json":
			doc, _ := json.Marshal(map[string]any{"job": j.Name, "job_key": j.Key, "comparison": json.RawMessage(buf.Bytes())})
			docs = append(docs, doc)
		case "csv":
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
	if docs != nil {
		out, err := json.MarshalIndent(map[string]any{"jobs": docs}, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", out)
		return err
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
