package fleet_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

// TestSubmitTriageCommand: `perfbot submit triage` (the real binary)
// queues a triage, waits for the server and a worker, and prints the
// report as perfbot triage does, naming the machine, with triage's exit
// status; asked again it prints the same verdict from what is stored.
// A metric the job lacks is refused before anything is queued.
func TestSubmitTriageCommand(t *testing.T) {
	f := newFixture(t, 3, 100000)
	noop := f.repo.Commit("a comment", map[string]string{"bench.c": testutil.BenchC(9, "a comment changed")})
	f.worker(t, "s1", 0)
	bin, err := perfbotBinary()
	if err != nil {
		t.Fatal(err)
	}
	submit := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, append([]string{"submit", "triage", "--db", f.url, "--class", "test", f.spec.File, f.commits[1], noop}, args...)...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		_ = cmd.Run()
		return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
	}
	code, out, errOut := submit("--layouts", "2", "--max-layouts", "2")
	if code != 0 {
		t.Fatalf("perfbot submit triage: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"no-change", "fleet machine s1 (class test)", "work_ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, f.url) {
		t.Errorf("the report shows the database URL:\n%s", out)
	}
	code, out, errOut = submit("--layouts", "2", "--max-layouts", "2", "-f", "json")
	var rep struct {
		Verdict string `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || rep.Verdict != "no-change" {
		t.Errorf("-f json: exit %d, %v, verdict %q\n%s%s", code, err, rep.Verdict, out, errOut)
	}
	// The triage's recorded document, the report of perfbot triage -f json.
	schematest.ValidateJSON(t, "triage", []byte(out))
	code, out, errOut = submit("--metric", "nope")
	if code != 2 || !strings.Contains(errOut, `--metric "nope"`) {
		t.Errorf("a metric the job lacks: exit %d\n%s%s", code, out, errOut)
	}
}
