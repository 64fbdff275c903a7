package layout

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
)

// gsec is one allocated section of a generated ELF file: its contents are
// the pieces, laid out from the end of the section before (rounded up to
// align), or data when set.
type gsec struct {
	name   string
	flags  elf.SectionFlag // SHF_ALLOC is added
	nobits bool
	align  uint64
	pieces []piece // symbols ('T'/'t' functions, 'L' labels, others objects) and unlabelled bytes
	data   []byte  // contents with no symbols (a string table); pieces ignored
}

// genELF writes an x86-64 executable whose sections follow each other from
// base, as a linker script without gaps would place them. Functions are
// filled with int3, other bytes are zero.
func genELF(base uint64, secs []gsec) []byte {
	le := binary.LittleEndian
	type shdr struct {
		name, typ              uint32
		flags, addr, off, size uint64
		link, info             uint32
		align, entsize         uint64
	}
	var shstr bytes.Buffer
	shstr.WriteByte(0)
	strOf := func(s string) uint32 {
		o := uint32(shstr.Len())
		shstr.WriteString(s + "\x00")
		return o
	}
	strtab := []byte{0}
	symtab := make([]byte, 24)
	shs := []shdr{{}}
	var body []byte // file contents from offset 0x1000
	addr := base
	for i, s := range secs {
		addr = (addr + s.align - 1) / s.align * s.align
		start := addr
		var contents []byte
		if s.data != nil {
			contents = s.data
		} else {
			for _, p := range link(start, s.pieces...) {
				typ := elf.STT_OBJECT
				switch p.typ {
				case 'T', 't':
					typ = elf.STT_FUNC
				case 'L': // a label: no type, no size
					typ = elf.STT_NOTYPE
				}
				var e [24]byte
				le.PutUint32(e[0:], uint32(len(strtab)))
				e[4] = byte(elf.STB_GLOBAL)<<4 | byte(typ)
				le.PutUint16(e[6:], uint16(i+1))
				le.PutUint64(e[8:], p.addr)
				le.PutUint64(e[16:], p.size)
				symtab = append(symtab, e[:]...)
				strtab = append(append(strtab, p.name...), 0)
				if end := p.addr + p.size - start; uint64(len(contents)) < end {
					contents = append(contents, make([]byte, end-uint64(len(contents)))...)
				}
				if typ == elf.STT_FUNC {
					copy(contents[p.addr-start:], bytes.Repeat([]byte{0xcc}, int(p.size)))
				}
			}
			if last := link(start, append(s.pieces, piece{name: "end", align: 1})...); len(last) > 0 {
				if end := last[len(last)-1].addr - start; uint64(len(contents)) < end {
					contents = append(contents, make([]byte, end-uint64(len(contents)))...)
				}
			}
			at := start
			for _, p := range s.pieces {
				if p.align > 1 {
					at = (at + p.align - 1) / p.align * p.align
				}
				copy(contents[at-start:], p.data)
				at += p.size
			}
		}
		size := uint64(len(contents))
		h := shdr{name: strOf(s.name), typ: uint32(elf.SHT_PROGBITS), flags: uint64(s.flags | elf.SHF_ALLOC),
			addr: start, size: size, align: s.align}
		if s.nobits {
			h.typ = uint32(elf.SHT_NOBITS)
			h.off = 0x1000 + uint64(len(body))
		} else {
			h.off = 0x1000 + uint64(len(body))
			body = append(body, contents...)
		}
		shs = append(shs, h)
		addr = start + size
	}
	symOff := 0x1000 + uint64(len(body))
	strOff := symOff + uint64(len(symtab))
	shs = append(shs, shdr{name: strOf(".symtab"), typ: uint32(elf.SHT_SYMTAB), off: symOff, size: uint64(len(symtab)),
		link: uint32(len(shs) + 1), info: 1, align: 8, entsize: 24})
	shs = append(shs, shdr{name: strOf(".strtab"), typ: uint32(elf.SHT_STRTAB), off: strOff, size: uint64(len(strtab)), align: 1})
	shstrIdx := len(shs)
	shs = append(shs, shdr{name: strOf(".shstrtab"), typ: uint32(elf.SHT_STRTAB), align: 1})
	shstrOff := strOff + uint64(len(strtab))
	shs[shstrIdx].off, shs[shstrIdx].size = shstrOff, uint64(shstr.Len())
	shOff := (shstrOff + uint64(shstr.Len()) + 7) / 8 * 8

	out := make([]byte, shOff+64*uint64(len(shs)))
	copy(out, elf.ELFMAG)
	out[4], out[5], out[6] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le.PutUint16(out[16:], uint16(elf.ET_EXEC))
	le.PutUint16(out[18:], uint16(elf.EM_X86_64))
	le.PutUint32(out[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(out[24:], base)
	le.PutUint64(out[40:], shOff)
	le.PutUint16(out[52:], 64)
	le.PutUint16(out[58:], 64)
	le.PutUint16(out[60:], uint16(len(shs)))
	le.PutUint16(out[62:], uint16(shstrIdx))
	copy(out[0x1000:], body)
	copy(out[symOff:], symtab)
	copy(out[strOff:], strtab)
	copy(out[shstrOff:], shstr.Bytes())
	for i, h := range shs {
		e := out[shOff+64*uint64(i):]
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
	}
	return out
}
