package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestBind(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE b = ? AND c = ?`, `SELECT a FROM t WHERE b = $1 AND c = $2`},
		{`VALUES (?, '?', 'it''s ?', ?, "col?", ?)`, `VALUES ($1, '?', 'it''s ?', $2, "col?", $3)`},
		{`(?, ?), (?, ?)`, `($1, $2), ($3, $4)`},
	} {
		if got := postgresDB.bind(tt.in); got != tt.want {
			t.Errorf("bind(%s) = %s, want %s", tt.in, got, tt.want)
		}
		if got := sqliteDB.bind(tt.in); got != tt.in {
			t.Errorf("SQLite bind(%s) = %s, want it unchanged", tt.in, got)
		}
	}
	want := fmt.Sprintf("$%d)", 4*valuesPerInsert)
	if got := postgresDB.bind(insertValuesSQL(valuesPerInsert)); !strings.HasSuffix(got, want) {
		t.Errorf("bind of %d values ends %q, want %s", valuesPerInsert, got[len(got)-10:], want)
	}
}

// TestBadPostgres checks which server errors mean a corrupt or read-only
// store. (A real damaged page cannot be made on a running server without
// restarting it; the codes are PostgreSQL's documented ones.)
func TestBadPostgres(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		code string
		want error
	}{
		{"XX001", ErrCorrupt},
		{"XX002", ErrCorrupt},
		{"25006", ErrReadOnly},
		{"42501", ErrReadOnly},
		{"23505", nil},
		{"40P01", nil},
	} {
		err := fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: tt.code, Message: "server says " + tt.code})
		got := badPostgres("postgres://h/db (schema perfbot)", "put run x", err)
		switch {
		case tt.want == nil && got != nil:
			t.Errorf("code %s: %v, want no bad-store error", tt.code, got)
		case tt.want != nil && (!errors.Is(got, tt.want) || !strings.Contains(got.Error(), "postgres://h/db") ||
			!strings.Contains(got.Error(), "server says "+tt.code)):
			t.Errorf("code %s: %v, want %v naming the database and the server's message", tt.code, got, tt.want)
		}
	}
	if badPostgres("d", "x", errors.New("plain")) != nil {
		t.Error("a plain error is a bad store")
	}
}

// TestRedactURL: no password reaches a message, whatever the form.
func TestRedactURL(t *testing.T) {
	for _, in := range []string{
		"postgres://u:hunter2@db:5432/perf",
		"postgres://u@db/perf?password=hunter2",
		"postgres://u:hunter2@db:notaport/perf",
		"host=db user=u password=hunter2 dbname=perf",
		"postgres://u:hunter2@db/perf?sslmode=bogus",
		"postgres://u@db/perf?sslpassword=hunter2",
		"postgres://u@db/perf?PASSWORD=hunter2",
	} {
		if got := RedactURL(in); strings.Contains(got, "hunter2") {
			t.Errorf("RedactURL(%q) = %q: the password shows", in, got)
		}
		// WithoutPassword, for a command shown on a page, follows the
		// same rule.
		if got, had := WithoutPassword(in); strings.Contains(got, "hunter2") || (got != "" && !had) {
			t.Errorf("WithoutPassword(%q) = %q, %v: the password shows, or is not said to be left out", in, got, had)
		}
	}
	if got, had := WithoutPassword("postgres://u@db/perf?sslmode=disable"); got != "postgres://u@db/perf?sslmode=disable" || had {
		t.Errorf("WithoutPassword of a URL with no password: %q, %v", got, had)
	}
	if got := RedactURL("/tmp/x/.perfbot"); got != "/tmp/x/.perfbot" {
		t.Errorf("a folder: %q", got)
	}
}
