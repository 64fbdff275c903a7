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

// Mail sends msg from from to the addresses of to through the SMTP server
// at addr (host:port), without authentication (a relay on the host or the
// local network), and returns the recipients the server accepted: one it
// refuses (a bogus author address) does not keep the mail from the
// others; the error says which were refused. The whole exchange has a
// deadline of a minute, so a server that stalls cannot hold perfbot.
func Mail(ctx context.Context, addr, from string, to []string, msg []byte) (accepted []string, err error) {
	if len(to) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	d := net.Dialer{}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("mail server %s: %w", addr, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	host, _, _ := net.SplitHostPort(addr)
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("mail server %s: %w", addr, err)
	}
	defer c.Close()
	if err := c.Mail(from); err != nil {
		return nil, fmt.Errorf("mail server %s: sender %s: %w", addr, from, err)
	}
	var refused []string
	for _, rcpt := range to {
		if err := c.Rcpt(rcpt); err != nil {
			refused = append(refused, fmt.Sprintf("%s (%v)", rcpt, err))
			continue
		}
		accepted = append(accepted, rcpt)
	}
	if len(accepted) == 0 {
		return nil, fmt.Errorf("mail server %s: every recipient refused: %s", addr, strings.Join(refused, ", "))
	}
	w, err := c.Data()
	if err != nil {
		return nil, fmt.Errorf("mail server %s: %w", addr, err)
	}
	if _, err := w.Write(msg); err != nil {
		return nil, fmt.Errorf("mail server %s: %w", addr, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("mail server %s: %w", addr, err)
	}
	_ = c.Quit()
	if len(refused) > 0 {
		return accepted, fmt.Errorf("mail server %s: refused %s", addr, strings.Join(refused, ", "))
	}
	return accepted, nil
}

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
