package compare

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The files under testdata/files are real output, captured once on a
// 2-CPU VM (testdata/files/README): each *-new file ran a planted slowdown
// of its *-old file's benchmark, so every format's regression is known.

func td(name string) string { return filepath.Join("testdata", "files", name) }

func rowOf(t *testing.T, tab *Table, metric string) *Row {
	t.Helper()
	for i := range tab.Rows {
		if tab.Rows[i].Metric == metric {
			return &tab.Rows[i]
		}
	}
	var names []string
	for _, r := range tab.Rows {
		names = append(names, r.Metric)
	}
	t.Fatalf("no row %q in %v", metric, names)
	return nil
}

// TestFromFilesFormats: each format is told by its content, keeps a unit
// people can read, and the planted slowdown is a significant regression.
func TestFromFilesFormats(t *testing.T) {
	for _, tc := range []struct {
		format, old, new, metric, unit string
	}{
		{"go", "go-old.txt", "go-new.txt", "example.com/gob/a:Encode-2.ns/op", "ns/op"},
		{"go B/op", "go-old.txt", "go-new.txt", "example.com/gob/a:Encode-2.B/op", "B/op"},
		{"gbench", "gbench-old.json", "gbench-new.json", "BM_copy/4096.cpu_time_ns", "ns"},
		{"hyperfine", "hyperfine-old.json", "hyperfine-new.json", "sleep.time_ms", "ms"},
		{"pytest-benchmark", "pytest-old.json", "pytest-new.json", "test_fib.time_us", "us"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			tab, warns, err := FromFiles(Files{Paths: []string{td(tc.old), td(tc.new)}})
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) > 0 {
				t.Errorf("warnings %v", warns)
			}
			r := rowOf(t, tab, tc.metric)
			if r.Unit != tc.unit {
				t.Errorf("unit %q, want %q", r.Unit, tc.unit)
			}
			if med := r.Cells[0].Summary.Median; !(med >= 1 && med < 1e6) {
				t.Errorf("base median %v %s: not in a readable scale", med, r.Unit)
			}
			if d := r.Cells[1].Delta; d == nil || !d.Regression || !d.Stat.Significant {
				t.Errorf("planted slowdown not a significant regression: %+v", d)
			}
		})
	}
}

// TestFromFilesGoKeepsPkg: benchmarks of one name in two packages are two
// rows, and the values stay in the file's units.
func TestFromFilesGoKeepsPkg(t *testing.T) {
	tab, _, err := FromFiles(Files{Paths: []string{td("go-old.txt"), td("go-new.txt")}})
	if err != nil {
		t.Fatal(err)
	}
	a := rowOf(t, tab, "example.com/gob/a:Encode-2.B/op")
	b := rowOf(t, tab, "example.com/gob/b:Encode-2.B/op")
	if got := a.Cells[1].Summary.Median; got != 4096 {
		t.Errorf("pkg a's new B/op median %v, want 4096 (strings.Repeat of 4096 bytes)", got)
	}
	if got := b.Cells[1].Summary.Median; got != 64 {
		t.Errorf("pkg b's new B/op median %v, want 64 (unchanged)", got)
	}
	ns := rowOf(t, tab, "example.com/gob/b:Encode-2.ns/op")
	if med := ns.Cells[0].Summary.Median; med < 10 {
		t.Errorf("ns/op median %v: seconds, not the file's ns/op", med)
	}
}

// TestFromFilesProjections: benchstat's --filter, --col and --row.
func TestFromFilesProjections(t *testing.T) {
	paths := []string{td("go-old.txt"), td("go-new.txt")}
	tab, _, err := FromFiles(Files{Paths: paths, Filter: ".name:Encode .unit:B/op"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range tab.Rows {
		names = append(names, r.Metric)
	}
	if want := []string{"example.com/gob/a:Encode-2.B/op", "example.com/gob/b:Encode-2.B/op"}; !slices.Equal(names, want) {
		t.Errorf("--filter rows %v, want %v", names, want)
	}

	// One file, a column per package: the row names lose the package.
	tab, _, err = FromFiles(Files{Paths: paths[:1], Col: "pkg"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Columns) != 2 || tab.Columns[0].ID != "example.com/gob/a" || tab.Columns[1].ID != "example.com/gob/b" {
		t.Errorf("--col pkg columns %+v", tab.Columns)
	}
	rowOf(t, tab, "Encode-2.B/op")

	// Rows by .name pool the GOMAXPROCS suffix; a column per file and package.
	tab, _, err = FromFiles(Files{Paths: paths, Row: ".name", Col: ".file,pkg"})
	if err != nil {
		t.Fatal(err)
	}
	if want := td("go-old.txt") + " example.com/gob/b"; len(tab.Columns) != 4 || tab.Columns[1].ID != want {
		t.Errorf("--col .file,pkg columns %+v", tab.Columns)
	}
	rowOf(t, tab, "Encode.ns/op")
}

// TestFromFilesStdin: "-" reads standard input, once.
func TestFromFilesStdin(t *testing.T) {
	old, err := os.ReadFile(td("go-old.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tab, _, err := FromFiles(Files{Paths: []string{StdinName, td("go-new.txt")}, Stdin: bytes.NewReader(old)})
	if err != nil {
		t.Fatal(err)
	}
	if tab.Columns[0].ID != StdinName {
		t.Errorf("base column %q, want %q", tab.Columns[0].ID, StdinName)
	}
	rowOf(t, tab, "example.com/gob/a:Encode-2.ns/op")
	_, _, err = FromFiles(Files{Paths: []string{StdinName, StdinName}, Stdin: bytes.NewReader(old)})
	if err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("- twice: %v", err)
	}
}

// TestFromFilesCriterion: criterion's JSON lines and a lone estimates.json
// (its id from its folder) are read; one estimate per file is too few for
// a test, so nothing is called a change.
func TestFromFilesCriterion(t *testing.T) {
	data, err := os.ReadFile(td("criterion.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "fib 15", "new")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The estimates of the first line, as criterion writes them to
	// target/criterion/fib 15/new/estimates.json.
	line := string(data[:bytes.IndexByte(data, '\n')])
	est := line[strings.Index(line, `"estimates":`)+len(`"estimates":`) : len(line)-1]
	p := filepath.Join(dir, "estimates.json")
	if err := os.WriteFile(p, []byte(est), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, _, err := FromFiles(Files{Paths: []string{td("criterion.jsonl"), p}})
	if err != nil {
		t.Fatal(err)
	}
	r := rowOf(t, tab, "fib_15.mean_us")
	if r.Cells[0].Summary.Median != r.Cells[1].Summary.Median || r.Changed() {
		t.Errorf("the same estimate read two ways differs: %+v", r.Cells)
	}
}

// TestFromFilesErrors: nothing to compare is an error naming the file or
// the flag, never an empty table.
func TestFromFilesErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old := td("go-old.txt")
	for _, tc := range []struct {
		name string
		in   Files
		want string
	}{
		{"empty", Files{Paths: []string{old, write("empty.txt", " \n")}}, "empty.txt: empty file"},
		{"unknown JSON", Files{Paths: []string{write("x.json", `{"rows": []}`), old}}, "x.json: JSON of no known format"},
		{"prose", Files{Paths: []string{old, write("notes.txt", "faster now\n")}}, "notes.txt: no benchmark results"},
		{"hyperfine without results", Files{Paths: []string{old, write("h.json", `{"results": []}`)}}, "h.json: hyperfine: no results"},
		{"formats differ", Files{Paths: []string{old, td("gbench-old.json")}}, "appears in"},
		{"filter syntax", Files{Paths: []string{old, old}, Filter: ".name:("}, "--filter"},
		{"col syntax", Files{Paths: []string{old, old}, Col: "pkg@nope"}, "--col"},
		{"filter keeps nothing", Files{Paths: []string{old, td("go-new.txt")}, Filter: ".name:Nope"}, "keeps no result"},
		{"one column", Files{Paths: []string{old}}, "one column"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab, _, err := FromFiles(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("table %v, error %v: want an error with %q", tab != nil, err, tc.want)
			}
			if tc.name == "empty" && !strings.Contains(err.Error(), "hyperfine") {
				t.Errorf("error %v does not list the formats tried", err)
			}
		})
	}
}
