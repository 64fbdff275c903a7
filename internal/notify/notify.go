// Package notify delivers perfbot's findings: to an SMTP server (over TLS
// off loopback, with AUTH when configured: Send), and to a command hook.
// It only transports messages; package report writes them, and package
// watch decides what goes to whom, once.
package notify

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Hook runs command with sh -c in dir (the watch file's folder) and
// PERFBOT_FINDING set to the path of a finding's JSON file, for at most
// ten minutes; its output is returned with its error.
func Hook(ctx context.Context, command, dir, findingFile string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PERFBOT_FINDING="+findingFile)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("report hook %q: %w: %s", command, err, strings.TrimSpace(string(out)))
	}
	return nil
}
