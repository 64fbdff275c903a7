package knobs

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/testutil"
)

var rustProgram = map[string]string{
	"Cargo.toml": `[package]
name = "knobsprog"
version = "0.1.0"
edition = "2021"

[profile.release]
debug = false
`,
	"src/main.rs": `static mut TABLE: [u64; 64] = [0; 64];

#[inline(never)]
fn hot(n: u64) -> u64 {
    let mut s = 0;
    for i in 0..n {
        s += i >> 1;
    }
    s
}

#[inline(never)]
fn cold(n: u64) -> u64 {
    n * 3
}

fn main() {
    let n = std::env::args().count() as u64 * 1000;
    unsafe { TABLE[(n & 63) as usize] += 1; }
    println!("{} {} {}", hot(n), cold(n), unsafe { TABLE[(n & 63) as usize] });
}
`,
}

// rustBuild builds the program offline with the variant; it skips the test
// when cargo cannot build offline at all.
func rustBuild(t *testing.T, v job.Variant) *layout.Binary {
	t.Helper()
	dir := buildIn(t, rustProgram, "cargo build --release --offline -q", map[string]string{"CARGO_TARGET_DIR": "target"}, v)
	return open(t, filepath.Join(dir, "target", "release", "knobsprog"))
}

// TestRustKnobs: LLVM's -align-all-functions=6 puts functions at 0 mod 64,
// lld's --shuffle-sections moves code (text layouts) or data (data
// layouts), and the restore padding gives a function its old offset back.
func TestRustKnobs(t *testing.T) {
	testutil.NeedTool(t, "cargo", "rustc")
	probe := t.TempDir()
	writeFiles(t, probe, rustProgram)
	cmd := exec.Command("cargo", "build", "--release", "--offline", "-q")
	cmd.Dir = probe
	cmd.Env = append(os.Environ(), "CARGO_TARGET_DIR=target")
	if out, err := cmd.CombinedOutput(); err != nil {
		testutil.SkipIncapable(t, "cargo cannot build a crate without dependencies offline here: %v\n%s", err, out)
	}
	p, err := Lookup("rust")
	if err != nil {
		t.Fatal(err)
	}
	plain := rustBuild(t, job.Variant{})
	if !containsLLD(plain) {
		testutil.SkipIncapable(t, "rustc does not link with lld here: the shuffle and restore knobs need it")
	}
	al := rustBuild(t, p.ForcedAlignment())
	for _, name := range []string{"9knobsprog3hot", "9knobsprog4cold"} {
		if off := symLike(t, al, name).Off(64); off != 0 {
			t.Errorf("aligned build: %s at %d mod 64, want 0", name, off)
		}
	}
	// With lld the segments follow each other, so a text layout also moves
	// the data after the code by the change in code size, and a data
	// layout the code after .rodata: check what each layout is for.
	var text *layout.Binary
	for _, v := range p.TextLayouts(5)[1:] {
		b := rustBuild(t, v)
		if symLike(t, b, "9knobsprog3hot").Off(64) != symLike(t, plain, "9knobsprog3hot").Off(64) {
			text = b
			break
		}
	}
	if text == nil {
		t.Fatalf("no text layout of 4 moved hot to another offset mod 64")
	}
	data := rustBuild(t, p.DataLayouts(2)[1])
	moved := 0
	for _, s := range plain.Symbols {
		if s.Kind != layout.Object || s.Section == nil || s.Section.TLS {
			continue
		}
		if o := data.Lookup(s.Name); len(o) == 1 && o[0].Addr != s.Addr {
			moved++
		}
	}
	if moved == 0 {
		t.Errorf("data layout %s moved no data object", p.DataLayouts(2)[1].Name)
	}

	// Restore: the text layout moved hot; pad it back.
	hotName := symLike(t, text, "9knobsprog3hot").Name
	pad, err := layout.ProposePadding(layout.Diff(text, plain, layout.DiffOptions{NoSource: true}), hotName)
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.Restore(pad, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	restored := rustBuild(t, v)
	if got, want := sym(t, restored, hotName).Off(64), sym(t, text, hotName).Off(64); got != want {
		t.Errorf("restored hot at %d mod 64, want %d (its offset in the other build)", got, want)
	}
}

func containsLLD(b *layout.Binary) bool {
	data, err := os.ReadFile(b.Path)
	if err != nil {
		return false
	}
	return bytesContains(data, []byte("Linker: LLD"))
}

func bytesContains(b, sub []byte) bool {
	for i := 0; i+len(sub) <= len(b); i++ {
		if string(b[i:i+len(sub)]) == string(sub) {
			return true
		}
	}
	return false
}
