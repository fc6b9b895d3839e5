package pause

// Linux x86-64 system call numbers and constants the program uses.
const (
	amd64SysRtSigprocmask  = 14
	amd64SysWait4          = 61
	amd64SysRtSigtimedwait = 128
	amd64SysExitGroup      = 231
)

// amd64Program is the sandbox's whole program for linux/amd64, in the
// order of sigwait-based inits such as tini: block SIGINT, SIGTERM and
// SIGCHLD (blocked signals are queued even for a PID namespace's init,
// which ignores unhandled ones), then take them one by one with
// rt_sigtimedwait: SIGCHLD reaps every exited child, SIGINT or SIGTERM
// exits 0, an interrupted wait waits again. No stack, heap or libc.
func amd64Program() *asm {
	a := newAsm()
	// rt_sigprocmask(SIG_BLOCK, &set, NULL, 8)
	a.op(0xb8, amd64SysRtSigprocmask, 0, 0, 0) // mov eax, 14
	a.op(0x31, 0xff)                           // xor edi, edi (SIG_BLOCK)
	a.rel("set", 4, 0x48, 0x8d, 0x35)          // lea rsi, [rip+set]
	a.op(0x31, 0xd2)                           // xor edx, edx
	a.op(0x41, 0xba, sigsetSize, 0, 0, 0)      // mov r10d, 8
	a.op(0x0f, 0x05)                           // syscall

	a.label("wait")
	// rt_sigtimedwait(&set, NULL, NULL, 8): the signal taken, or -errno
	a.op(0xb8, amd64SysRtSigtimedwait, 0, 0, 0) // mov eax, 128
	a.rel("set", 4, 0x48, 0x8d, 0x3d)           // lea rdi, [rip+set]
	a.op(0x31, 0xf6)                            // xor esi, esi
	a.op(0x31, 0xd2)                            // xor edx, edx
	a.op(0x41, 0xba, sigsetSize, 0, 0, 0)       // mov r10d, 8
	a.op(0x0f, 0x05)                            // syscall
	a.op(0x83, 0xf8, sigchld)                   // cmp eax, SIGCHLD
	a.rel("reap", 1, 0x74)                      // je reap
	a.op(0x85, 0xc0)                            // test eax, eax
	a.rel("wait", 1, 0x78)                      // js wait (EINTR)

	// SIGINT or SIGTERM: exit_group(0)
	a.op(0xb8, amd64SysExitGroup, 0, 0, 0) // mov eax, 231
	a.op(0x31, 0xff)                       // xor edi, edi
	a.op(0x0f, 0x05)                       // syscall

	a.label("reap")
	// wait4(-1, NULL, WNOHANG, NULL) until no exited child is left
	a.op(0xb8, amd64SysWait4, 0, 0, 0) // mov eax, 61
	a.op(0x48, 0x83, 0xcf, 0xff)       // or rdi, -1
	a.op(0x31, 0xf6)                   // xor esi, esi
	a.op(0xba, wnohang, 0, 0, 0)       // mov edx, WNOHANG
	a.op(0x45, 0x31, 0xd2)             // xor r10d, r10d
	a.op(0x0f, 0x05)                   // syscall
	a.op(0x48, 0x85, 0xc0)             // test rax, rax
	a.rel("reap", 1, 0x7f)             // jg reap (reaped one: try again)
	a.rel("wait", 1, 0xeb)             // jmp wait (none left, or ECHILD)

	a.align(8, 0xcc) // int3 padding
	a.label("set")
	a.op(le64(waitedSignals)...)
	return a
}
