// Package notify delivers perfbot's findings: to an SMTP server, and to a
// command hook. It only transports messages; package report writes them.
package notify

import (
	"context"
	"fmt"
	"net"
	"net/smtp"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Mail sends msg from from to every address of to through the SMTP server
// at addr (host:port), without authentication (a relay on the host or the
// local network). It fails, naming the server, when the server cannot be
// reached within the timeout or refuses a recipient.
func Mail(ctx context.Context, addr, from string, to []string, msg []byte) error {
	if len(to) == 0 {
		return nil
	}
	d := net.Dialer{Timeout: 30 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("mail server %s: %w", addr, err)
	}
	host, _, _ := net.SplitHostPort(addr)
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("mail server %s: %w", addr, err)
	}
	defer c.Close()
	if err := c.Mail(from); err != nil {
		return fmt.Errorf("mail server %s: sender %s: %w", addr, from, err)
	}
	for _, rcpt := range to {
		if err := c.Rcpt(rcpt); err != nil {
			return fmt.Errorf("mail server %s: recipient %s: %w", addr, rcpt, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("mail server %s: %w", addr, err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("mail server %s: %w", addr, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("mail server %s: %w", addr, err)
	}
	return c.Quit()
}

// Hook runs command with sh -c and PERFBOT_FINDING set to the path of a
// finding's JSON file; its output is returned with its error.
func Hook(ctx context.Context, command, findingFile string) error {
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Env = append(os.Environ(), "PERFBOT_FINDING="+findingFile)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("report hook %q: %w: %s", command, err, strings.TrimSpace(string(out)))
	}
	return nil
}
