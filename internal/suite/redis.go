package suite

import (
	"regexp"
	"slices"
	"strings"
)

// redis: redis-benchmark against a redis-server the run starts (from PATH,
// or the one the job's build makes: server: ./src/redis-server) and stops,
// on a Unix socket in a temporary directory (port: N for TCP on
// 127.0.0.1), persistence off.
//
//	suite: {name: redis, server: ./src/redis-server, tests: "set,get", requests: 100000}
//
// Metrics as lkp names them: redis.set_total_throughput_rps and
// redis.get_total_throughput_rps (requests per second; the key metrics
// when the tests include set or get), redis.<TEST> for the other tests
// (redis.LPUSH, redis.LRANGE_100, ...), and the latencies of the CSV:
// redis.<test>_latency_avg_ms, _50%_ms, _95%_ms, _99%_ms, _min_ms, _max_ms.
func redis() *Suite {
	return &Suite{
		Name:    "redis",
		Summary: "redis-benchmark against a redis-server it starts (from PATH or built from the repository)",
		Options: []Option{
			{Name: "server", Default: "redis-server", Doc: "the redis-server to start: a name on PATH (Debian package redis-server) or a path in the worktree the build makes (./src/redis-server)", check: required("the redis-server to start")},
			{Name: "client", Default: "redis-benchmark", Doc: "the redis-benchmark to run (Debian package redis-tools)", check: required("the redis-benchmark to run")},
			{Name: "tests", Default: "set,get", Doc: "redis-benchmark -t: comma-separated tests (set,get,incr,lpush,lrange_100,mset,ping,...)", check: matches(reTests, "comma-separated test names")},
			{Name: "requests", Default: "100000", Doc: "requests per test (-n)", check: count(1)},
			{Name: "clients", Default: "50", Doc: "parallel connections (-c)", check: count(1)},
			{Name: "data_size", Default: "3", Doc: "bytes of a SET/GET value (-d)", check: count(1)},
			{Name: "pipeline", Default: "1", Doc: "requests per pipeline (-P)", check: count(1)},
			{Name: "keyspace", Default: "0", Doc: "random keys out of this many (-r; 0: one key)", check: count(0)},
			{Name: "port", Default: "0", Doc: "TCP port on 127.0.0.1 (0: a Unix socket instead)", check: count(0)},
			{Name: "server_args", Doc: "extra arguments for redis-server, as shell words"},
			extra("redis-benchmark"),
		},
		expand: func(o values, given map[string]bool) (*Use, error) {
			s := newScript("redis")
			s.need(Program{Command: o.get("server"), Package: "redis-server"})
			s.need(Program{Command: o.get("client"), Package: "redis-tools"})
			s.add("set -e")
			s.add(`dir=$(mktemp -d "${TMPDIR:-/tmp}/perfbot-redis.XXXXXX")`)
			s.add(`srv=`)
			s.add(`trap 'if [ -n "$srv" ]; then kill "$srv" 2>/dev/null || :; wait "$srv" 2>/dev/null || :; fi; rm -rf "$dir"' EXIT`)
			listen, conn := `--port 0 --unixsocket "$dir/redis.sock"`, `-s "$dir/redis.sock"`
			if p := o.get("port"); p != "0" {
				listen, conn = "--port "+p+" --bind 127.0.0.1", "-h 127.0.0.1 -p "+p
			}
			s.add(`%s %s --save '' --appendonly no --dir "$dir"%s >"$dir/server.log" 2>&1 &`, quote(o.get("server")), listen, args(o.get("server_args")))
			s.add(`srv=$!`)
			s.add(`i=0`)
			s.add(`until grep -qi 'ready to accept connections' "$dir/server.log"; do`)
			s.add(`  if ! kill -0 "$srv" 2>/dev/null; then cat "$dir/server.log" >&2; echo 'perfbot: suite redis: redis-server exited' >&2; exit 1; fi`)
			s.add(`  i=$((i+1)); if [ $i -gt 400 ]; then cat "$dir/server.log" >&2; echo 'perfbot: suite redis: redis-server not ready after 20s' >&2; exit 1; fi`)
			s.add(`  sleep 0.05`)
			s.add(`done`)
			cmd := quote(o.get("client")) + " " + conn + " -n " + o.get("requests") + " -c " + o.get("clients") +
				" -d " + o.get("data_size") + " -P " + o.get("pipeline") + " -t " + o.get("tests")
			if k := o.get("keyspace"); k != "0" {
				cmd += " -r " + k
			}
			s.add(`%s --csv%s`, cmd, args(o.get("args")))
			u := s.use("")
			tests := strings.Split(o.get("tests"), ",")
			for _, t := range []string{"set", "get"} {
				if slices.Contains(tests, t) {
					u.Metrics = append(u.Metrics, named("redis-benchmark", "redis."+t+"_total_throughput_rps", higher))
				}
			}
			u.Metrics = append(u.Metrics, family("redis-benchmark"))
			return u, nil
		},
	}
}

var reTests = regexp.MustCompile(`^[a-z0-9_]+(,[a-z0-9_]+)*$`)
