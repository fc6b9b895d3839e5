package pause

import "fmt"

// Linux arm64 system call numbers the program uses.
const (
	arm64SysExitGroup      = 94
	arm64SysRtSigprocmask  = 135
	arm64SysRtSigtimedwait = 137
	arm64SysWait4          = 260
)

// arm64Program is amd64Program for linux/arm64: the same steps and system
// calls, the number in x8, arguments in x0–x3, the result in x0.
func arm64Program() *asm {
	a := newAsm()
	// rt_sigprocmask(SIG_BLOCK, &set, NULL, 8)
	a.word(movz(8, arm64SysRtSigprocmask))
	a.word(movz(0, 0)) // SIG_BLOCK
	a.insn("set", adr(1))
	a.word(movz(2, 0))
	a.word(movz(3, sigsetSize))
	a.word(svc0)

	a.label("wait")
	// rt_sigtimedwait(&set, NULL, NULL, 8): the signal taken, or -errno
	a.word(movz(8, arm64SysRtSigtimedwait))
	a.insn("set", adr(0))
	a.word(movz(1, 0))
	a.word(movz(2, 0))
	a.word(movz(3, sigsetSize))
	a.word(svc0)
	a.word(cmpImm(0, sigchld))
	a.insn("reap", bcond(condEQ))
	a.word(cmpImm(0, 0))
	a.insn("wait", bcond(condLT)) // EINTR

	// SIGINT or SIGTERM: exit_group(0)
	a.word(movz(8, arm64SysExitGroup))
	a.word(movz(0, 0))
	a.word(svc0)

	a.label("reap")
	// wait4(-1, NULL, WNOHANG, NULL) until no exited child is left
	a.word(movz(8, arm64SysWait4))
	a.word(0x92800000) // movn x0, #0: x0 = -1
	a.word(movz(1, 0))
	a.word(movz(2, wnohang))
	a.word(movz(3, 0))
	a.word(svc0)
	a.word(cmpImm(0, 0))
	a.insn("reap", bcond(condGT)) // reaped one: try again
	a.insn("wait", b)             // none left, or ECHILD

	a.align(8, 0)
	a.label("set")
	a.op(le64(waitedSignals)...)
	return a
}

// The arm64 encodings the program needs (Arm ARM, A64 base instructions).
const (
	svc0   = 0xd4000001 // svc #0
	condEQ = 0x0
	condLT = 0xb
	condGT = 0xc
)

// movz is `movz xd, #imm`.
func movz(rd, imm uint32) uint32 { return 0xd2800000 | (imm&0xffff)<<5 | rd }

// cmpImm is `cmp xn, #imm` (subs xzr, xn, #imm).
func cmpImm(rn, imm uint32) uint32 { return 0xf100001f | (imm&0xfff)<<10 | rn<<5 }

// adr is `adr xd, label`.
func adr(rd uint32) func(int) (uint32, error) {
	return func(d int) (uint32, error) {
		if d < -1<<20 || d >= 1<<20 {
			return 0, fmt.Errorf("adr displacement %d out of range", d)
		}
		imm := uint32(d) & 0x1fffff
		return 0x10000000 | (imm&3)<<29 | (imm>>2)<<5 | rd, nil
	}
}

// bcond is `b.cond label`.
func bcond(cond uint32) func(int) (uint32, error) {
	return func(d int) (uint32, error) {
		if d%4 != 0 || d < -1<<20 || d >= 1<<20 {
			return 0, fmt.Errorf("b.cond displacement %d out of range", d)
		}
		return 0x54000000 | (uint32(d/4)&0x7ffff)<<5 | cond, nil
	}
}

// b is `b label`.
func b(d int) (uint32, error) {
	if d%4 != 0 || d < -1<<27 || d >= 1<<27 {
		return 0, fmt.Errorf("b displacement %d out of range", d)
	}
	return 0x14000000 | uint32(d/4)&0x3ffffff, nil
}
