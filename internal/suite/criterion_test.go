package suite

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// TestCriterion builds a criterion benchmark offline from Debian's crates
// (cargo, librust-criterion-dev) with the build command perfbot init
// suggests, and runs it with the suite. CI does not install cargo (the
// build takes a minute and a half on two cores), so it runs where cargo and
// Debian's criterion crate are installed, and not with -short.
func TestCriterion(t *testing.T) {
	testutil.NeedTool(t, "cargo")
	if testing.Short() {
		t.Skip("skipping: building criterion takes a minute and a half")
	}
	if m, _ := filepath.Glob("/usr/share/cargo/registry/criterion-*"); len(m) == 0 {
		t.Skip("skipping: Debian's criterion crate is not installed (Debian package librust-criterion-dev)")
	}
	dir, _ := scratch(t, map[string]string{
		"Cargo.toml": `[package]
name = "fib"
version = "0.1.0"
edition = "2018"

[dev-dependencies]
criterion = "0.3"

[[bench]]
name = "fib"
harness = false
`,
		"src/lib.rs": "pub fn fib(n: u64) -> u64 { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } }\n",
		"benches/fib.rs": `use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
fn bench(c: &mut Criterion) {
    c.bench_function("fib 10", |b| b.iter(|| fib::fib(black_box(10))));
    let mut g = c.benchmark_group("sum");
    g.throughput(Throughput::Bytes(4096));
    g.bench_function("bytes", |b| b.iter(|| black_box([1u8; 4096]).iter().map(|&x| x as u64).sum::<u64>()));
    g.finish();
}
criterion_group!(benches, bench);
criterion_main!(benches);
`})
	u := expand(t, "criterion", map[string]string{"warm_up_time": "1", "measurement_time": "1"})
	build := exec.Command("sh", "-c", u.Build)
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %q: %v\n%s", u.Build, err, out)
	}
	got, _ := runUse(t, u, dir)
	wantMetrics(t, got, map[string]byte{"criterion.fib_10.mean": '-', "criterion.fib_10.median": '-', "criterion.fib_10.std_dev": '-',
		"criterion.sum/bytes.mean": '-', "criterion.sum/bytes.bytes_per_second": '+'})
}
