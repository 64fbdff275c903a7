package suite

import (
	"strings"
)

// fio: a storage (or page cache) I/O pattern, read with fio's JSON output.
//
//	suite: {name: fio, rw: randread, bs: 4k, size: 256M, directory: /mnt/test}
//
// or a fio job file of the repository: suite: {name: fio, jobfile: bench.fio}.
// Metrics as lkp names them: fio.read_bw_MBps and fio.read_iops (the key
// metrics of a reading pattern; write_ for writing ones, both for rw and
// randrw), then fio.<dir>_clat_mean_ns, _clat_stddev, _clat_90%_ns,
// _95%_ns, _99%_ns and fio.workload.
func fio() *Suite {
	return &Suite{
		Name:    "fio",
		Summary: "fio: one I/O pattern (or a job file), bandwidth, IOPS and latency",
		Options: []Option{
			{Name: "rw", Default: "randread", Doc: "the I/O pattern", check: oneOf("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw")},
			{Name: "bs", Default: "4k", Doc: "block size", check: matches(reSize, "a size (4k, 1M)")},
			{Name: "size", Default: "64M", Doc: "file size per job", check: matches(reSize, "a size (64M, 1G)")},
			{Name: "ioengine", Default: "psync", Doc: "I/O engine (psync, libaio, io_uring, ...)", check: matches(reName, "an engine name")},
			{Name: "iodepth", Default: "1", Doc: "I/Os in flight (for asynchronous engines)", check: count(1)},
			{Name: "numjobs", Default: "1", Doc: "jobs (processes) doing the pattern, reported as a group", check: count(1)},
			{Name: "runtime", Doc: "seconds to run, time-based (default: until size is done)", check: matches(reOptSeconds, "whole seconds")},
			{Name: "direct", Default: "0", Doc: "1: O_DIRECT, bypass the page cache", check: oneOf("0", "1")},
			{Name: "directory", Doc: "where fio puts its files (default: a new temporary directory, removed after the run; a tmpfs /tmp measures memory, not a disk)"},
			{Name: "jobfile", Doc: "a fio job file in the worktree, run instead of the options above"},
			program("fio", "fio"),
			extra("fio"),
		},
		expand: func(o values, given map[string]bool) (*Use, error) {
			s := newScript("fio")
			s.need(Program{Command: o.get("program"), Package: "fio"})
			s.add("set -e")
			cmd := quote(o.get("program")) + ` --output-format=json --output="$out"`
			var u *Use
			if jf := o.get("jobfile"); jf != "" {
				for _, opt := range []string{"rw", "bs", "size", "ioengine", "iodepth", "numjobs", "runtime", "direct", "directory"} {
					if given[opt] {
						return nil, o.errorf(opt, "the job file %s sets it: give it there, or leave jobfile out", jf)
					}
				}
				s.capture("")
				s.add(`%s%s %s >&2`, cmd, args(o.get("args")), quote(jf))
				s.add(`cat "$out"`)
				u = s.use("")
				u.Metrics = append(u.Metrics, family("fio"))
				return u, nil
			}
			if d := o.get("directory"); d != "" {
				s.add(`dir=%s`, quote(d))
				s.capture(`rm -f "$dir"/perfbot.[0-9]*.[0-9]*`)
			} else {
				s.add(`dir=$(mktemp -d "${TMPDIR:-/tmp}/perfbot-fio.XXXXXX")`)
				s.capture(`rm -rf "$dir"`)
			}
			cmd += ` --name=perfbot --directory="$dir"` + flag("--rw", o.get("rw")) + flag("--bs", o.get("bs")) +
				flag("--size", o.get("size")) + flag("--ioengine", o.get("ioengine")) + flag("--iodepth", o.get("iodepth")) +
				flag("--numjobs", o.get("numjobs")) + " --group_reporting" + flag("--direct", o.get("direct"))
			if rt := o.get("runtime"); rt != "" {
				cmd += flag("--runtime", rt) + " --time_based"
			}
			s.add(`%s%s >&2`, cmd, args(o.get("args")))
			s.add(`cat "$out"`)
			u = s.use("")
			rw := o.get("rw")
			mixed := rw == "rw" || rw == "readwrite" || rw == "randrw"
			var dirs []string
			if mixed || strings.Contains(rw, "read") {
				dirs = append(dirs, "read")
			}
			if mixed || strings.Contains(rw, "write") {
				dirs = append(dirs, "write")
			}
			for _, d := range dirs {
				u.Metrics = append(u.Metrics, named("fio", "fio."+d+"_bw_MBps", higher), named("fio", "fio."+d+"_iops", higher))
			}
			u.Metrics = append(u.Metrics, family("fio"))
			return u, nil
		},
	}
}
