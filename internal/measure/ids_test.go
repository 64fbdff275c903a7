package measure

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSeedOf: the one seed function is the 64-bit FNV-1a hash of its parts
// (each followed by a zero byte, so that parts do not run into each
// other): the same parts give the same seed, different ones differ.
func TestSeedOf(t *testing.T) {
	// FNV-1a of "job\x00abc\x00" with the standard offset basis
	// 0xcbf29ce484222325 and prime 0x100000001b3, as a signed integer.
	if got, want := SeedOf("job", "abc"), int64(8140914119715964020); got != want {
		t.Errorf("SeedOf(job, abc) = %d, want %d", got, want)
	}
	if SeedOf("ab", "c") == SeedOf("a", "bc") {
		t.Error("parts run into each other")
	}
	if SeedOf("bisect", "0123456789abcdef") == SeedOf("bisect", "0123456789abcdee") {
		t.Error("two job keys give one seed")
	}
}

// TestLastLineStorable: a benchmark's stderr with invalid UTF-8 and NUL
// bytes still gives a reason the store accepts, so the failed run is kept.
func TestLastLineStorable(t *testing.T) {
	got := lastLine([]byte("ok\nbad \xff\xfe byte \x00 here\n"))
	if !utf8.ValidString(got) || strings.IndexByte(got, 0) >= 0 {
		t.Fatalf("lastLine = %q: not storable text", got)
	}
	if !strings.Contains(got, "bad") || !strings.Contains(got, "here") {
		t.Errorf("lastLine = %q: lost the line's text", got)
	}
}

// TestLastLineLongUTF8: a long last line of multi-byte characters is cut
// on a character's boundary (gcc quotes with ‘’).
func TestLastLineLongUTF8(t *testing.T) {
	for pad := 0; pad < 4; pad++ {
		line := strings.Repeat("a", pad) + strings.Repeat("‘é’", 100)
		if got := lastLine([]byte(line)); !utf8.ValidString(got) || !strings.HasSuffix(got, "...") {
			t.Errorf("pad %d: lastLine = %q: not valid UTF-8 or not cut", pad, got)
		}
	}
}
