package pause

import "fmt"

// asm assembles position-dependent code: bytes, labels, and the relative
// displacements to them, resolved by bytes(). A label used but never
// placed, or a displacement out of range, is an error, never silent code.
type asm struct {
	code   []byte
	labels map[string]int
	fixups []fixup
}

// fixup is a displacement of size bytes at off, relative to the end of
// the instruction (end), to be filled with label's offset; or, with
// encode, a 32-bit instruction at off encoded from the displacement to
// label from its own start (fixed-width ISAs such as arm64).
type fixup struct {
	off, size, end int
	label          string
	encode         func(d int) (uint32, error)
}

func newAsm() *asm { return &asm{labels: map[string]int{}} }

// op appends raw instruction bytes.
func (a *asm) op(b ...byte) { a.code = append(a.code, b...) }

// label places name at the current offset.
func (a *asm) label(name string) { a.labels[name] = len(a.code) }

// rel appends opcode, then a size-byte displacement to label measured from
// the end of the instruction, after tail bytes (x86's rip-relative forms).
func (a *asm) rel(label string, size int, opcode ...byte) {
	a.op(opcode...)
	a.fixups = append(a.fixups, fixup{off: len(a.code), size: size, end: len(a.code) + size, label: label})
	a.code = append(a.code, make([]byte, size)...)
}

// insn appends a 32-bit little-endian instruction that encode builds from
// the displacement to label from the instruction's start.
func (a *asm) insn(label string, encode func(d int) (uint32, error)) {
	a.fixups = append(a.fixups, fixup{off: len(a.code), size: 4, label: label, encode: encode})
	a.code = append(a.code, 0, 0, 0, 0)
}

// word appends a 32-bit little-endian instruction.
func (a *asm) word(w uint32) { a.op(byte(w), byte(w>>8), byte(w>>16), byte(w>>24)) }

// align pads with pad to a multiple of n.
func (a *asm) align(n int, pad byte) {
	for len(a.code)%n != 0 {
		a.code = append(a.code, pad)
	}
}

// bytes returns the code with every displacement filled in.
func (a *asm) bytes() ([]byte, error) {
	out := append([]byte(nil), a.code...)
	for _, f := range a.fixups {
		at, ok := a.labels[f.label]
		if !ok {
			return nil, fmt.Errorf("label %q used but never placed", f.label)
		}
		if f.encode != nil {
			w, err := f.encode(at - f.off)
			if err != nil {
				return nil, fmt.Errorf("reference to %q: %w", f.label, err)
			}
			out[f.off], out[f.off+1], out[f.off+2], out[f.off+3] = byte(w), byte(w>>8), byte(w>>16), byte(w>>24)
			continue
		}
		d := at - f.end
		switch f.size {
		case 1:
			if d < -128 || d > 127 {
				return nil, fmt.Errorf("jump to %q: displacement %d does not fit a byte", f.label, d)
			}
			out[f.off] = byte(int8(d))
		case 4:
			v := uint32(int32(d))
			out[f.off], out[f.off+1], out[f.off+2], out[f.off+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		default:
			return nil, fmt.Errorf("displacement size %d", f.size)
		}
	}
	return out, nil
}
