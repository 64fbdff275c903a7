package layout

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"os"
	"sort"
)

// synthSym is one symbol of a synthetic ELF file.
type synthSym struct {
	name  string
	sec   int // 1 .text, 2 .data, 3 .bss
	off   uint64
	size  uint64
	local bool
	file  string // for locals: the STT_FILE group
}

// synthELF describes a synthetic x86-64 executable: a tiny ELF writer for
// tests, fuzz seeds and the vmlinux-sized benchmark.
type synthELF struct {
	text     []byte // .text contents; nil: textSize zero bytes (sparse)
	textSize uint64
	dataSize uint64 // .data, zero bytes (sparse)
	bssSize  uint64
	syms     []synthSym
	textAddr uint64
}

// writerAt is an in-memory io.WriterAt.
type writerAt struct{ b []byte }

func (w *writerAt) WriteAt(p []byte, off int64) (int, error) {
	if end := int(off) + len(p); end > len(w.b) {
		w.b = append(w.b, make([]byte, end-len(w.b))...)
	}
	copy(w.b[off:], p)
	return len(p), nil
}

// bytes renders a small synthetic ELF in memory.
func (s *synthELF) bytes() []byte {
	var w writerAt
	size, err := s.write(&w)
	if err != nil {
		panic(err)
	}
	if int64(len(w.b)) < size {
		w.b = append(w.b, make([]byte, size-int64(len(w.b)))...)
	}
	return w.b
}

// writeFile writes the ELF to path, leaving the code and data as holes so
// a 250 MB file costs little disk and time.
func (s *synthELF) writeFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	size, err := s.write(f)
	if err == nil {
		err = f.Truncate(size)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func align(x, a uint64) uint64 { return (x + a - 1) / a * a }

// write lays the file out: header, .text, .data, .symtab, .strtab,
// .shstrtab, section headers. It returns the file size.
func (s *synthELF) write(w io.WriterAt) (int64, error) {
	le := binary.LittleEndian
	if s.textAddr == 0 {
		s.textAddr = 0x401000
	}
	textSize := s.textSize
	if s.text != nil {
		textSize = uint64(len(s.text))
	}
	textOff := uint64(0x1000)
	if s.text != nil && len(s.text) <= 256 {
		textOff = 64 // keep small test files (and fuzz seeds) small
	}
	dataOff := align(textOff+textSize, 64)
	dataAddr := align(s.textAddr+textSize, 0x1000)
	bssAddr := align(dataAddr+s.dataSize, 64)
	secAddr := []uint64{0, s.textAddr, dataAddr, bssAddr}

	// String table and symbols: locals (grouped by file) first, then globals.
	var strtab bytes.Buffer
	strtab.WriteByte(0)
	strOff := map[string]uint32{}
	str := func(n string) uint32 {
		if o, ok := strOff[n]; ok {
			return o
		}
		o := uint32(strtab.Len())
		strtab.WriteString(n)
		strtab.WriteByte(0)
		strOff[n] = o
		return o
	}
	order := make([]int, len(s.syms))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := s.syms[order[i]], s.syms[order[j]]
		if a.local != b.local {
			return a.local
		}
		if a.local {
			return a.file < b.file
		}
		return false
	})
	symtab := make([]byte, 24) // null symbol
	ent := func(name uint32, info byte, shndx uint16, value, size uint64) {
		var e [24]byte
		le.PutUint32(e[0:], name)
		e[4] = info
		le.PutUint16(e[6:], shndx)
		le.PutUint64(e[8:], value)
		le.PutUint64(e[16:], size)
		symtab = append(symtab, e[:]...)
	}
	curFile := "\x00none"
	nlocal := 1
	for _, i := range order {
		sym := s.syms[i]
		if sym.local && sym.file != curFile {
			curFile = sym.file
			ent(str(sym.file), byte(elf.STB_LOCAL)<<4|byte(elf.STT_FILE), uint16(elf.SHN_ABS), 0, 0)
			nlocal++
		}
		typ := elf.STT_OBJECT
		if sym.sec == 1 {
			typ = elf.STT_FUNC
		}
		bind := elf.STB_GLOBAL
		if sym.local {
			bind = elf.STB_LOCAL
			nlocal++
		}
		ent(str(sym.name), byte(bind)<<4|byte(typ), uint16(sym.sec), secAddr[sym.sec]+sym.off, sym.size)
	}
	shstr := []byte("\x00.text\x00.data\x00.bss\x00.symtab\x00.strtab\x00.shstrtab\x00")
	symOff := align(dataOff+s.dataSize, 8)
	strtabOff := symOff + uint64(len(symtab))
	shstrOff := strtabOff + uint64(strtab.Len())
	shOff := align(shstrOff+uint64(len(shstr)), 8)

	type shdr struct {
		name, typ        uint32
		flags, addr, off uint64
		size             uint64
		link, info       uint32
		align, entsize   uint64
	}
	shs := []shdr{
		{},
		{1, uint32(elf.SHT_PROGBITS), uint64(elf.SHF_ALLOC | elf.SHF_EXECINSTR), s.textAddr, textOff, textSize, 0, 0, 64, 0},
		{7, uint32(elf.SHT_PROGBITS), uint64(elf.SHF_ALLOC | elf.SHF_WRITE), dataAddr, dataOff, s.dataSize, 0, 0, 64, 0},
		{13, uint32(elf.SHT_NOBITS), uint64(elf.SHF_ALLOC | elf.SHF_WRITE), bssAddr, dataOff + s.dataSize, s.bssSize, 0, 0, 64, 0},
		{18, uint32(elf.SHT_SYMTAB), 0, 0, symOff, uint64(len(symtab)), 5, uint32(nlocal), 8, 24},
		{26, uint32(elf.SHT_STRTAB), 0, 0, strtabOff, uint64(strtab.Len()), 0, 0, 1, 0},
		{34, uint32(elf.SHT_STRTAB), 0, 0, shstrOff, uint64(len(shstr)), 0, 0, 1, 0},
	}
	var hdr [64]byte
	copy(hdr[:], elf.ELFMAG)
	hdr[4], hdr[5], hdr[6] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le.PutUint16(hdr[16:], uint16(elf.ET_EXEC))
	le.PutUint16(hdr[18:], uint16(elf.EM_X86_64))
	le.PutUint32(hdr[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(hdr[24:], s.textAddr)
	le.PutUint64(hdr[40:], shOff)
	le.PutUint16(hdr[52:], 64)
	le.PutUint16(hdr[58:], 64)
	le.PutUint16(hdr[60:], uint16(len(shs)))
	le.PutUint16(hdr[62:], 6)
	sh := make([]byte, 0, 64*len(shs))
	for _, h := range shs {
		var e [64]byte
		le.PutUint32(e[0:], h.name)
		le.PutUint32(e[4:], h.typ)
		le.PutUint64(e[8:], h.flags)
		le.PutUint64(e[16:], h.addr)
		le.PutUint64(e[24:], h.off)
		le.PutUint64(e[32:], h.size)
		le.PutUint32(e[40:], h.link)
		le.PutUint32(e[44:], h.info)
		le.PutUint64(e[48:], h.align)
		le.PutUint64(e[56:], h.entsize)
		sh = append(sh, e[:]...)
	}
	for _, part := range []struct {
		off  uint64
		data []byte
	}{{0, hdr[:]}, {textOff, s.text}, {symOff, symtab}, {strtabOff, strtab.Bytes()}, {shstrOff, shstr}, {shOff, sh}} {
		if len(part.data) == 0 {
			continue
		}
		if _, err := w.WriteAt(part.data, int64(part.off)); err != nil {
			return 0, err
		}
	}
	return int64(shOff) + int64(len(sh)), nil
}

// vmlinuxLike returns a synthetic kernel-sized build: nFuncs functions in
// .text, nObjs objects split over .data and .bss, local duplicates in
// file groups and gcc clone names. Variant "b" drops a 16-byte object at
// the start of .bss and adds a function at the start of .text, so that
// almost every symbol moves, the worst case for a diff.
func vmlinuxLike(nFuncs, nObjs int, variant string) *synthELF {
	rng := rand.New(rand.NewSource(1))
	s := &synthELF{textAddr: 0xffffffff81000000}
	off := uint64(0)
	if variant == "b" {
		s.syms = append(s.syms, synthSym{name: "new_function", sec: 1, off: 0, size: 40})
		off = 48
	}
	// Variant "shuffled" lays the same functions out in another order, as
	// lld --shuffle-sections or go -ldflags=-randlayout would.
	perm := make([]int, nFuncs)
	for i := range perm {
		perm[i] = i
	}
	if variant == "shuffled" {
		rand.New(rand.NewSource(2)).Shuffle(nFuncs, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	}
	sizes := make([]uint64, nFuncs)
	for i := range sizes {
		sizes[i] = uint64(16 + rng.Intn(1500))
	}
	offs := make([]uint64, nFuncs)
	for _, i := range perm {
		offs[i] = off
		off = align(off+sizes[i], 16)
	}
	for i := 0; i < nFuncs; i++ {
		size := sizes[i]
		sym := synthSym{name: fmt.Sprintf("func_%d", i), sec: 1, off: offs[i], size: size}
		switch i % 10 {
		case 3:
			sym.local, sym.name = true, "helper" // a static of the same name in many files
		case 5:
			sym.name += ".isra.0"
		case 7:
			sym.local, sym.name = true, fmt.Sprintf("func_%d.cold", i)
		}
		if sym.local {
			sym.file = fmt.Sprintf("file%05d.c", i/50)
		}
		s.syms = append(s.syms, sym)
	}
	s.textSize = off
	dataOff, bssOff := uint64(0), uint64(0)
	for i := 0; i < nObjs; i++ {
		size := uint64(4 + rng.Intn(1300))
		if i%2 == 0 {
			s.syms = append(s.syms, synthSym{name: fmt.Sprintf("data_%d", i), sec: 2, off: dataOff, size: size})
			dataOff = align(dataOff+size, 8)
			continue
		}
		if i == 1 {
			if variant != "b" {
				s.syms = append(s.syms, synthSym{name: "mds_user_clear", sec: 3, off: bssOff, size: 16})
			}
			bssOff += 16
			if variant == "b" {
				bssOff -= 16
			}
		}
		sym := synthSym{name: fmt.Sprintf("bss_%d", i), sec: 3, off: bssOff, size: size}
		if i%10 == 1 {
			sym.local, sym.name, sym.file = true, "counter", fmt.Sprintf("file%05d.c", i/50)
		}
		s.syms = append(s.syms, sym)
		bssOff = align(bssOff+size, 8)
	}
	s.dataSize, s.bssSize = dataOff, bssOff
	return s
}
