package store_test

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/store"
)

// TestLock: one measuring process per store folder; the error names the
// holder; released locks can be taken again.
func TestLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	release, err := a.Lock()
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Lock()
	if !errors.Is(err, store.ErrBusy) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second Lock: %v; want ErrBusy naming pid %d", err, os.Getpid())
	}
	release()
	release2, err := b.Lock()
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	release2()
}
