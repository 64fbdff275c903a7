package fleet

// The files a layout variant's build needs, carried from the server to the
// machine that builds it.
//
// The layout knobs (package knobs) write what a variant's build uses into
// the server's knobs folder (<results store dir>/knobs): compiler or
// linker wrapper folders put first on PATH, padding assembler files, Go
// overlays; the variant's environment names them by absolute path. A
// worker has its own folders, so Remote.Build uploads every file of the
// knobs folder that the variant names (as blobs, by content) and the
// worker writes them under its own knobs folder, with the server's folder
// replaced by its own in the files and in the variant's environment, and
// builds that variant. The runs keep the variant as the server planned it
// (their environment's size is part of what a restore experiment holds
// equal across its columns); a wrapper folder on their PATH that this
// machine lacks changes nothing for a run.

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/perfbot/perfbot/internal/job"
)

// KnobFiles are the files of the server's knobs folder that a variant
// names.
type KnobFiles struct {
	// Root is the server's knobs folder, as the variant's environment and
	// the files spell it.
	Root  string     `json:"root"`
	Files []KnobFile `json:"files"`
}

// KnobFile is one file (or symbolic link) under KnobFiles.Root.
type KnobFile struct {
	Path string `json:"path"`             // relative to Root
	SHA  string `json:"sha256,omitempty"` // a regular file's content, as a blob
	Link string `json:"link,omitempty"`   // a symbolic link's target
	Exec bool   `json:"exec,omitempty"`   // executable
}

// knobFiles uploads the files under root that v's environment names and
// lists them; nil when it names none (a plain build, or a variant of the
// job file).
func knobFiles(ctx context.Context, pool *pgxpool.Pool, root string, v job.Variant) (*KnobFiles, error) {
	if root == "" || len(v.Env) == 0 {
		return nil, nil
	}
	prefix := strings.TrimSuffix(root, "/") + "/"
	var tops []string // the entries of root the environment names
	for _, val := range v.Env {
		for rest := val; ; {
			i := strings.Index(rest, prefix)
			if i < 0 {
				break
			}
			rest = rest[i+len(prefix):]
			top, _, _ := strings.Cut(rest, "/")
			top, _, _ = strings.Cut(top, ":")
			if top != "" && !slices.Contains(tops, top) {
				tops = append(tops, top)
			}
		}
	}
	if len(tops) == 0 {
		return nil, nil
	}
	slices.Sort(tops)
	kf := &KnobFiles{Root: root}
	for _, top := range tops {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			f := KnobFile{Path: filepath.ToSlash(rel)}
			if d.Type()&fs.ModeSymlink != 0 {
				if f.Link, err = os.Readlink(path); err != nil {
					return err
				}
			} else {
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				fi, err := d.Info()
				if err != nil {
					return err
				}
				f.Exec = fi.Mode()&0o111 != 0
				if f.SHA, err = putBlob(ctx, pool, data); err != nil {
					return err
				}
			}
			kf.Files = append(kf.Files, f)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("the knobs file %s of the variant: %w", top, err)
		}
	}
	return kf, nil
}

// place writes the files under dir, the server's folder replaced by dir in
// their contents, and returns v with the same replacement in its
// environment: the variant to build on this machine.
func (kf *KnobFiles) place(ctx context.Context, pool *pgxpool.Pool, dir string, v job.Variant) (job.Variant, error) {
	if kf == nil {
		return v, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return v, err
	}
	if strings.ContainsAny(abs, ":$\n'") {
		return v, fmt.Errorf("knobs folder %q holds ':', '$', a quote or a newline, which PATH and the wrappers cannot carry", abs)
	}
	for _, f := range kf.Files {
		rel := filepath.FromSlash(f.Path)
		if !filepath.IsLocal(rel) {
			return v, fmt.Errorf("knobs file %q lies outside the knobs folder", f.Path)
		}
		path := filepath.Join(abs, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return v, err
		}
		if f.Link != "" {
			if cur, err := os.Readlink(path); err == nil && cur == f.Link {
				continue
			}
			_ = os.Remove(path)
			if err := os.Symlink(f.Link, path); err != nil {
				return v, err
			}
			continue
		}
		data, err := getBlob(ctx, pool, f.SHA)
		if err != nil {
			return v, fmt.Errorf("knobs file %s: %w", f.Path, err)
		}
		data = []byte(strings.ReplaceAll(string(data), kf.Root, abs))
		if err := writeFile(path, data); err != nil {
			return v, err
		}
		mode := os.FileMode(0o644)
		if f.Exec {
			mode = 0o755
		}
		if err := os.Chmod(path, mode); err != nil {
			return v, err
		}
	}
	env := make(map[string]string, len(v.Env))
	for k, val := range v.Env {
		env[k] = strings.ReplaceAll(val, kf.Root, abs)
	}
	v.Env = env
	return v, nil
}

// writeFile writes a small file (a knob's wrapper or padding) whole,
// through a temporary file and a rename, so that a reader never sees half
// of it.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
