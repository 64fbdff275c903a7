package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/perfbot/perfbot/internal/fleet"
)

// serve starts `perfbot serve --db --watch` (the real binary), logging
// into name.log.
func (f *fixture) serve(t *testing.T, name, watchFile string) (*exec.Cmd, string) {
	t.Helper()
	bin, err := perfbotBinary()
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(f.dir, name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--db", f.url, "--watch", watchFile, "--class", "test",
		"--dir", filepath.Join(f.dir, "serve"), "--addr", "127.0.0.1:0")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		log.Close()
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			t.Logf("%s's log:\n%s", name, data)
		}
	})
	return cmd, logPath
}

// TestFleetWatchServerKilled: the server running a watch cycle (perfbot
// serve --db --watch, a real process) is SIGKILLed in the middle of the
// cycle's measurement and started again: the cycle is queued again within
// seconds, not after its hour-long lease, resumes from what is stored
// and completes.
func TestFleetWatchServerKilled(t *testing.T) {
	f := newFixture(t, 8, 2000000)
	// Only the serve processes work the watch cycle.
	stop, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = f.server.Stop(stop)
	f.worker(t, "k1", 0)
	watchFile := filepath.Join(filepath.Dir(f.spec.File), "watch.yaml")
	if err := os.WriteFile(watchFile, []byte(fmt.Sprintf("jobs: [%s]\nbranches: [main]\ninterval: 1h\n", filepath.Base(f.spec.File))), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := fleet.InsertOnly(f.pool)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := f.serve(t, "serve1", watchFile)
	var cycle *rivertype.JobRow
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no round of the watch cycle ran within 60s")
		}
		done := 0
		for _, r := range jobs(t, c, "perfbot.round") {
			if r.State == rivertype.JobStateCompleted {
				done++
			}
		}
		if ws := jobs(t, c, "perfbot.watch"); len(ws) == 1 && ws[0].State == rivertype.JobStateRunning && done >= 2 {
			cycle = ws[0]
			break
		}
	}
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	restarted := time.Now()
	_, log2 := f.serve(t, "serve2", watchFile)
	ctx, cancelWait := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancelWait()
	row, err := fleet.Await(ctx, c, cycle.ID, 200*time.Millisecond)
	if err != nil {
		t.Fatalf("the cycle (job %d) after the restart: %v", cycle.ID, err)
	}
	t.Logf("the cycle completed %.1fs after the restart", time.Since(restarted).Seconds())
	var out fleet.WatchOutput
	if err := json.Unmarshal(row.Output(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Tested != 1 || out.Status != 0 {
		t.Errorf("the resumed cycle: %d commits tested, status %d, errors %v; want the head, 0", out.Tested, out.Status, out.Errors)
	}
	data, _ := os.ReadFile(log2)
	if !strings.Contains(string(data), fmt.Sprintf("watch cycle job %d: its server is gone; queued again", cycle.ID)) {
		t.Errorf("the new server did not say it queued the cycle again:\n%s", data)
	}
	if ws := jobs(t, c, "perfbot.watch"); len(ws) != 1 {
		t.Errorf("%d watch jobs, want the one cycle", len(ws))
	}
}
