package pause

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"runtime"
)

// Signals the sandbox waits for, and the constants of its system calls.
const (
	sigint     = 2
	sigterm    = 15
	sigchld    = 17
	wnohang    = 1
	sigsetSize = 8 // bytes of the kernel's sigset_t on 64-bit Linux

	waitedSignals = 1<<(sigint-1) | 1<<(sigterm-1) | 1<<(sigchld-1)
)

// Path is where the program sits in the pause image, and its entrypoint.
const Path = "/pause"

// programs are the architectures berth has a native sandbox program for,
// by GOARCH; others fall back to berth's own binary (`berth pause`).
var programs = map[string]struct {
	machine elf.Machine
	code    func() *asm
	// waitSyscall is the number of rt_sigtimedwait, where it blocks.
	waitSyscall int
}{
	"amd64": {elf.EM_X86_64, amd64Program, amd64SysRtSigtimedwait},
	"arm64": {elf.EM_AARCH64, arm64Program, arm64SysRtSigtimedwait},
}

// Program returns the sandbox program for goarch: a complete static ELF
// executable of a few hundred bytes that does what Run does, with no
// runtime. ok is false for an architecture berth has none for.
func Program(goarch string) (exe []byte, ok bool) {
	p, ok := programs[goarch]
	if !ok {
		return nil, false
	}
	exe, err := buildELF(p.machine, p.code())
	if err != nil {
		panic(fmt.Sprintf("pause program for %s: %v", goarch, err)) // fixed code: a bug, caught by the tests
	}
	return exe, true
}

// Native is Program for the architecture berth runs on.
func Native() ([]byte, bool) { return Program(runtime.GOARCH) }

// Digest is the hex sha256 of exe: what the pause image is tagged by.
func Digest(exe []byte) string {
	sum := sha256.Sum256(exe)
	return hex.EncodeToString(sum[:])
}

// loadAddr is where the one segment is mapped: the conventional base of a
// non-PIE executable, above vm.mmap_min_addr.
const loadAddr = 0x400000

// buildELF wraps code in a static ELF64 executable: the header, a PT_LOAD
// mapping the whole file read+execute, and a PT_GNU_STACK so the stack is
// never executable.
func buildELF(machine elf.Machine, code *asm) ([]byte, error) {
	body, err := code.bytes()
	if err != nil {
		return nil, err
	}
	const hdrs = 64 + 2*56 // ELF header, two program headers
	size := uint64(hdrs + len(body))
	h := elf.Header64{
		Type: uint16(elf.ET_EXEC), Machine: uint16(machine), Version: uint32(elf.EV_CURRENT),
		Entry: loadAddr + hdrs, Phoff: 64, Ehsize: 64, Phentsize: 56, Phnum: 2,
	}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	h.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	h.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	h.Ident[elf.EI_OSABI] = byte(elf.ELFOSABI_NONE)
	load := elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X),
		Vaddr: loadAddr, Paddr: loadAddr, Filesz: size, Memsz: size, Align: 0x1000}
	stack := elf.Prog64{Type: uint32(elf.PT_GNU_STACK), Flags: uint32(elf.PF_R | elf.PF_W), Align: 16}
	var buf bytes.Buffer
	for _, v := range []any{h, load, stack} {
		if err := binary.Write(&buf, binary.LittleEndian, v); err != nil {
			return nil, err
		}
	}
	buf.Write(body)
	return buf.Bytes(), nil
}

func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
