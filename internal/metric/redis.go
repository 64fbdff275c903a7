package metric

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// redis-benchmark --csv. lkp-tests' parser (programs/redis/parse) reads
// redis-benchmark's text output and names SET and GET
// redis.set_total_throughput_rps and redis.get_total_throughput_rps, with
// latency percentiles redis.set_latency_95%_ms, _99%_ms, ...; every other
// test by its name alone (redis.PING_INLINE, redis.LPUSH, redis.LRANGE_100,
// and redis.LPUSH_LRANGE for "LPUSH (needed to benchmark LRANGE)"), in
// requests per second. readRedisCSV gives the same names from the CSV and
// adds, in the same pattern, every latency column the CSV has (redis 7:
// <test>_latency_avg_ms, _min_ms, _50%_ms, _95%_ms, _99%_ms, _max_ms; the
// test is "set", "get" or the name above). lkp's set_avg_throughput_rps
// (the mean over several redis-benchmark processes) is the total for one
// process and is not repeated. Redis 5's CSV, two columns without a
// header, gives the throughputs only.

var redisPercentile = regexp.MustCompile(`^p([0-9.]+)_latency_ms$`)

func readRedisCSV(data []byte) ([]Value, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	var header []string
	var vals []Value
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not redis-benchmark's CSV: %v", err)
		}
		if len(rec) == 0 || strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if rec[0] == "test" {
			header = rec
			continue
		}
		if len(rec) < 2 {
			return nil, fmt.Errorf("not redis-benchmark's CSV: line %q has one field", strings.Join(rec, ","))
		}
		key := redisKey(rec[0])
		for i, field := range rec[1:] {
			col := "rps"
			if header != nil && i+1 < len(header) {
				col = header[i+1]
			}
			v, err := parseNumber(field)
			if err != nil {
				return nil, fmt.Errorf("test %s, %s: %v", rec[0], col, err)
			}
			switch m := redisPercentile.FindStringSubmatch(col); {
			case col == "rps" && (key == "set" || key == "get"):
				vals = append(vals, Value{Name: key + "_total_throughput_rps", Unit: "requests/s", Better: HigherIsBetter, Value: v})
			case col == "rps":
				vals = append(vals, Value{Name: key, Unit: "requests/s", Better: HigherIsBetter, Value: v})
			case m != nil:
				vals = append(vals, Value{Name: key + "_latency_" + m[1] + "%_ms", Unit: "ms", Better: LowerIsBetter, Value: v})
			case strings.HasSuffix(col, "_latency_ms"):
				vals = append(vals, Value{Name: key + "_latency_" + strings.TrimSuffix(col, "_latency_ms") + "_ms", Unit: "ms", Better: LowerIsBetter, Value: v})
			}
		}
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("no test results: %w", ErrMissing)
	}
	return vals, nil
}

// redisKey names a redis-benchmark test as lkp does.
func redisKey(test string) string {
	switch {
	case test == "SET" || test == "GET":
		return strings.ToLower(test)
	case strings.HasPrefix(test, "LPUSH (needed to benchmark LRANGE)"):
		return "LPUSH_LRANGE"
	}
	name, _, _ := strings.Cut(test, " (")
	return LKPName(name)
}
