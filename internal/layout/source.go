package layout

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
)

// DefaultMaxDWARF is the default limit on the size of the debug sections
// [Diff] loads to find source lines: a kernel's DWARF runs to gigabytes,
// and a layout diff must stay fast.
const DefaultMaxDWARF = 64 << 20

// sourceTable is a binary's DWARF, loaded on first use.
type sourceTable struct {
	d    *dwarf.Data
	err  error
	vars map[uint64]string // data object address -> "file:line", for the addresses asked
	bo   binary.ByteOrder
}

// loadDWARF loads the debug information once. It is skipped (with an
// error kept for the notes) when the debug sections exceed max bytes.
func (b *Binary) loadDWARF(max int64) *sourceTable {
	if b.src != nil {
		return b.src
	}
	b.src = &sourceTable{}
	if b.Format != ELF {
		b.src.err = fmt.Errorf("no debug information in a symbol map")
		return b.src
	}
	var r io.ReaderAt = b.ra
	if r == nil {
		f, err := os.Open(b.Path)
		if err != nil {
			b.src.err = err
			return b.src
		}
		defer f.Close()
		r = f
	}
	ef, err := elf.NewFile(r)
	if err != nil {
		b.src.err = err
		return b.src
	}
	var total uint64
	have := false
	for _, s := range ef.Sections {
		if strings.HasPrefix(s.Name, ".debug_") || strings.HasPrefix(s.Name, ".zdebug_") {
			total += s.Size
			if s.Name == ".debug_info" || s.Name == ".zdebug_info" {
				have = true
			}
		}
	}
	if !have {
		b.src.err = fmt.Errorf("no DWARF debug information (build with -g for source lines)")
		return b.src
	}
	if max >= 0 && total > uint64(max) {
		b.src.err = fmt.Errorf("debug sections are %d MiB, over the %d MiB limit: source lines skipped", total>>20, max>>20)
		return b.src
	}
	d, err := ef.DWARF()
	if err != nil {
		b.src.err = fmt.Errorf("reading DWARF: %v", err)
		return b.src
	}
	b.src.d = d
	b.src.bo = ef.ByteOrder
	return b.src
}

// pcLine returns "file:line" for the instruction at pc, or "".
func (t *sourceTable) pcLine(pc uint64) string {
	if t.d == nil {
		return ""
	}
	r := t.d.Reader()
	cu, err := r.SeekPC(pc)
	if err != nil || cu == nil {
		return ""
	}
	lr, err := t.d.LineReader(cu)
	if err != nil || lr == nil {
		return ""
	}
	var le dwarf.LineEntry
	if err := lr.SeekPC(pc, &le); err != nil || le.File == nil || le.Line <= 0 {
		return ""
	}
	return fmt.Sprintf("%s:%d", le.File.Name, le.Line)
}

// varLines fills t.vars with the declaration "file:line" of the global
// variables at the addresses in want, walking the DWARF once.
func (t *sourceTable) varLines(want map[uint64]bool) {
	if t.d == nil || t.vars != nil {
		return
	}
	t.vars = map[uint64]string{}
	r := t.d.Reader()
	var cu *dwarf.Entry
	var files []*dwarf.LineFile
	filesLoaded := false
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			return
		}
		if e.Tag == dwarf.TagCompileUnit {
			cu, files, filesLoaded = e, nil, false
			continue
		}
		if e.Tag != dwarf.TagVariable {
			continue
		}
		loc, ok := e.Val(dwarf.AttrLocation).([]byte)
		// DW_OP_addr followed by a 4- or 8-byte address.
		if !ok || (len(loc) != 9 && len(loc) != 5) || loc[0] != 0x03 {
			continue
		}
		var addr uint64
		if len(loc) == 9 {
			addr = t.bo.Uint64(loc[1:])
		} else {
			addr = uint64(t.bo.Uint32(loc[1:]))
		}
		if !want[addr] {
			continue
		}
		line, _ := e.Val(dwarf.AttrDeclLine).(int64)
		fi, _ := e.Val(dwarf.AttrDeclFile).(int64)
		if !filesLoaded && cu != nil {
			filesLoaded = true
			if lr, err := t.d.LineReader(cu); err == nil && lr != nil {
				files = lr.Files()
			}
		}
		if line <= 0 || fi < 0 || int(fi) >= len(files) || files[fi] == nil {
			continue
		}
		t.vars[addr] = fmt.Sprintf("%s:%d", files[fi].Name, line)
	}
}
