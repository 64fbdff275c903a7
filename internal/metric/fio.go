package metric

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// fio --output-format=json. lkp-tests' parser (programs/fio/parse) names,
// per direction (read, write): <dir>_bw_MBps (KiB/s / 1024), <dir>_iops,
// <dir>_clat_mean_ns, <dir>_clat_stddev, <dir>_clat_90%_ns, _95%_ns and
// _99%_ns; and workload, the I/Os of both directions. readFio gives those.
// It leaves out what lkp also prints but a comparison has no use for: a
// direction that did no I/O (all zeros), the latency histogram
// (latency_<N>us%), and slat (lkp's <dir>_slat_mean_us holds fio's
// nanoseconds under a microsecond name). Several jobs (no group_reporting)
// are combined as lkp combines instances: bandwidths, IOPS and workload
// summed, the rest averaged.

type fioOp struct {
	BW       float64 `json:"bw"`
	IOPS     float64 `json:"iops"`
	TotalIOs float64 `json:"total_ios"`
	Clat     *struct {
		Mean       float64            `json:"mean"`
		Stddev     float64            `json:"stddev"`
		Percentile map[string]float64 `json:"percentile"`
	} `json:"clat_ns"`
}

type fioJob struct {
	Name  string `json:"jobname"`
	Error int    `json:"error"`
	Read  *fioOp `json:"read"`
	Write *fioOp `json:"write"`
}

func readFio(data []byte) ([]Value, error) {
	i := bytes.IndexByte(data, '{')
	if i < 0 {
		return nil, fmt.Errorf("no JSON document: %w", ErrMissing)
	}
	var doc struct {
		Jobs []fioJob `json:"jobs"`
	}
	if err := json.NewDecoder(bytes.NewReader(data[i:])).Decode(&doc); err != nil {
		return nil, fmt.Errorf("not fio's JSON: %v: %w", err, ErrMissing)
	}
	if len(doc.Jobs) == 0 {
		return nil, fmt.Errorf("no jobs in fio's JSON: %w", ErrMissing)
	}
	var order []string
	sums := map[string]float64{}
	counts := map[string]int{}
	meta := map[string]Value{}
	add := func(name, unit string, b Better, v float64) {
		if _, ok := meta[name]; !ok {
			order = append(order, name)
			meta[name] = Value{Name: name, Unit: unit, Better: b}
		}
		sums[name] += v
		counts[name]++
	}
	for _, j := range doc.Jobs {
		if j.Error != 0 {
			return nil, fmt.Errorf("fio job %s failed with error %d", j.Name, j.Error)
		}
		workload := 0.0
		for _, op := range []struct {
			dir string
			op  *fioOp
		}{{"read", j.Read}, {"write", j.Write}} {
			if op.op == nil || op.op.TotalIOs == 0 {
				continue
			}
			o := op.op
			workload += o.TotalIOs
			add(op.dir+"_bw_MBps", "MiB/s", HigherIsBetter, o.BW/1024)
			add(op.dir+"_iops", "IO/s", HigherIsBetter, o.IOPS)
			if o.Clat == nil {
				continue
			}
			add(op.dir+"_clat_mean_ns", "ns", LowerIsBetter, o.Clat.Mean)
			add(op.dir+"_clat_stddev", "ns", LowerIsBetter, o.Clat.Stddev)
			for _, p := range []string{"90", "95", "99"} {
				if v, ok := o.Clat.Percentile[p+".000000"]; ok {
					add(op.dir+"_clat_"+p+"%_ns", "ns", LowerIsBetter, v)
				}
			}
		}
		add("workload", "IOs", HigherIsBetter, workload)
	}
	var vals []Value
	for _, name := range order {
		v := meta[name]
		v.Value = sums[name]
		additive := name == "workload" || strings.HasSuffix(name, "_iops") || strings.HasSuffix(name, "_bw_MBps")
		if !additive {
			v.Value /= float64(counts[name])
		}
		vals = append(vals, v)
	}
	return vals, nil
}
