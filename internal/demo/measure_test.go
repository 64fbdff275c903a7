package demo

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// These helpers build and time the generated benchmark without perfbot,
// so that tests can check that the effects really reproduce on the host
// before they rely on them (see TestEffects).

// buildRev exports commit rev of the repository repoDir into dir (which must
// not exist or be empty), runs "make bench" there with the extra
// environment env (such as "CFLAGS=-falign-functions=64" or
// "EXTRA_OBJS=/abs/pad.o") and returns the path of the binary. CFLAGS,
// LDFLAGS and EXTRA_OBJS of the caller's environment are not passed on,
// so only env changes the build. A failed build returns an error with the
// end of its output.
func buildRev(ctx context.Context, repoDir, rev, dir string, env ...string) (string, error) {
	if err := emptyDir(dir); err != nil {
		return "", err
	}
	g := &gitCmd{dir: repoDir}
	cmd := exec.CommandContext(ctx, "git", "archive", "--format=tar", rev)
	cmd.Dir = repoDir
	cmd.Env = g.env()
	var archive, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &archive, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("demo: git archive %s in %s: %v: %s", rev, repoDir, err, strings.TrimSpace(stderr.String()))
	}
	if err := untar(&archive, dir); err != nil {
		return "", fmt.Errorf("demo: extracting %s: %v", rev, err)
	}
	mk := exec.CommandContext(ctx, "make", "bench")
	mk.Dir = dir
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "CFLAGS" && name != "LDFLAGS" && name != "EXTRA_OBJS" && name != "MAKEFLAGS" {
			mk.Env = append(mk.Env, kv)
		}
	}
	mk.Env = append(mk.Env, env...)
	out, err := mk.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("demo: make bench at %s (%s) failed: %v\n%s", rev, strings.Join(env, " "), err, tail(out, 15))
	}
	return filepath.Join(dir, "bench"), nil
}

// padObject compiles tools/pad.c of the repository repoDir (as of its
// working tree) into dir/pad-T-D.o and returns its path. Linked first
// (EXTRA_OBJS), the object moves the benchmark's code by text bytes and
// its zeroed data by data bytes; both must be multiples of 16.
func padObject(ctx context.Context, repoDir, dir string, text, data int) (string, error) {
	if text < 0 || data < 0 || text%16 != 0 || data%16 != 0 {
		return "", fmt.Errorf("demo: padding of %d text and %d data bytes: want non-negative multiples of 16", text, data)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("demo: %v", err)
	}
	obj := filepath.Join(dir, fmt.Sprintf("pad-%d-%d.o", text, data))
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	cmd := exec.CommandContext(ctx, cc, "-c", "-O2",
		"-DTEXT_PAD="+strconv.Itoa(text), "-DDATA_PAD="+strconv.Itoa(data),
		"-o", obj, filepath.Join(repoDir, "tools", "pad.c"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("demo: compiling the padding object: %v\n%s", err, tail(out, 15))
	}
	return obj, nil
}

// abResult is the outcome of [runAB].
type abResult struct {
	Metric string
	A, B   []float64 // the samples of each side, pair by pair
	// Ratios are B/A pair by pair; Ratio is their median.
	Ratios []float64
	Ratio  float64
}

// String formats the result as "ratio 1.412 (B/A, median of 12 pairs; A
// median 8.10, B median 11.43)".
func (r abResult) String() string {
	return fmt.Sprintf("ratio %.3f (B/A, median of %d pairs; A median %.3f, B median %.3f %s)",
		r.Ratio, len(r.Ratios), median(r.A), median(r.B), r.Metric)
}

// runAB runs binaries a and b with args in alternating balanced pairs (A B,
// then B A, ...), reads metric from each run and returns the pair ratios.
// Pairs must be at least 1.
func runAB(ctx context.Context, a, b string, args []string, metric string, pairs, cpu int) (abResult, error) {
	if pairs < 1 {
		return abResult{}, errors.New("demo: runAB needs at least one pair")
	}
	res := abResult{Metric: metric}
	for i := range pairs {
		var va, vb float64
		var err error
		if i%2 == 0 {
			if va, err = runPinned(ctx, a, args, metric, cpu); err == nil {
				vb, err = runPinned(ctx, b, args, metric, cpu)
			}
		} else {
			if vb, err = runPinned(ctx, b, args, metric, cpu); err == nil {
				va, err = runPinned(ctx, a, args, metric, cpu)
			}
		}
		if err != nil {
			return res, err
		}
		res.A = append(res.A, va)
		res.B = append(res.B, vb)
		res.Ratios = append(res.Ratios, vb/va)
	}
	res.Ratio = median(res.Ratios)
	return res, nil
}

// untar extracts a git archive (regular files and directories only).
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.FromSlash(h.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("archive entry %q leaves the directory", h.Name)
		}
		p := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}
