package pause

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
)

// Every program is a well-formed static executable for its machine.
func TestProgramsAreStaticELF(t *testing.T) {
	for goarch, p := range programs {
		exe, ok := Program(goarch)
		if !ok {
			t.Fatalf("%s: no program", goarch)
		}
		f, err := elf.NewFile(bytes.NewReader(exe))
		if err != nil {
			t.Fatalf("%s: %v", goarch, err)
		}
		if f.Machine != p.machine || f.Type != elf.ET_EXEC || f.Class != elf.ELFCLASS64 {
			t.Errorf("%s: machine %v type %v class %v", goarch, f.Machine, f.Type, f.Class)
		}
		var load *elf.Prog
		for _, pr := range f.Progs {
			switch pr.Type {
			case elf.PT_INTERP, elf.PT_DYNAMIC:
				t.Errorf("%s: %v header: not static", goarch, pr.Type)
			case elf.PT_GNU_STACK:
				if pr.Flags&elf.PF_X != 0 {
					t.Errorf("%s: executable stack", goarch)
				}
			case elf.PT_LOAD:
				load = pr
			}
		}
		if load == nil || f.Entry < load.Vaddr || f.Entry >= load.Vaddr+load.Filesz {
			t.Fatalf("%s: entry %#x outside the loaded segment", goarch, f.Entry)
		}
		if len(exe) > 1024 {
			t.Errorf("%s: %d bytes, want a program of under 1 KiB", goarch, len(exe))
		}
	}
	if _, ok := Program("sparc"); ok {
		t.Error("a program for an architecture berth has none for")
	}
}

// qemu names the user-mode emulator that runs each foreign program.
var qemu = map[string]string{"amd64": "qemu-x86_64-static", "arm64": "qemu-aarch64-static"}

// programRuns returns a command line for each program this machine can
// run: natively, or under qemu's user-mode emulator when installed (CI
// installs qemu-user-static, so every program is run, not only parsed).
func programRuns(t *testing.T) map[string][]string {
	t.Helper()
	if _, ok := programs[runtime.GOARCH]; !ok {
		t.Skipf("no native sandbox program for %s", runtime.GOARCH)
	}
	runs := map[string][]string{}
	for goarch := range programs {
		exe, _ := Program(goarch)
		path := filepath.Join(t.TempDir(), "pause-"+goarch)
		if err := os.WriteFile(path, exe, 0o755); err != nil {
			t.Fatal(err)
		}
		if goarch == runtime.GOARCH {
			runs[goarch] = []string{path}
			continue
		}
		emu, err := exec.LookPath(qemu[goarch])
		if err != nil {
			t.Logf("%s program not run: %s not installed", goarch, qemu[goarch])
			continue
		}
		runs[goarch] = []string{emu, path}
	}
	return runs
}

// The program blocks until SIGTERM or SIGINT, then exits 0; other
// signals it waits for (SIGCHLD) do not end it.
func TestProgramExitsOnTermAndInt(t *testing.T) {
	for goarch, argv := range programRuns(t) {
		t.Run(goarch, func(t *testing.T) { testExitsOnTermAndInt(t, argv) })
	}
}

func testExitsOnTermAndInt(t *testing.T, argv []string) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := exec.Command(argv[0], argv[1:]...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		waitBlocked(t, cmd.Process.Pid)
		if err := cmd.Process.Signal(syscall.SIGCHLD); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("exited on SIGCHLD: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("after %v: %v, want exit 0", sig, err)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("still running 10s after %v", sig)
		}
	}
}

// Children that exit are reaped: sh starts a short child, then execs the
// program, which so inherits the child and must wait for it.
func TestProgramReapsChildren(t *testing.T) {
	for goarch, argv := range programRuns(t) {
		t.Run(goarch, func(t *testing.T) { testReapsChildren(t, argv) })
	}
}

func testReapsChildren(t *testing.T, argv []string) {
	pidFile := filepath.Join(t.TempDir(), "child")
	args := append([]string{"-c", `sleep 0.2 & echo $! > "$1"; shift; exec "$@"`, "sh", pidFile}, argv...)
	cmd := exec.Command("/bin/sh", args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var child int
	testutil.WaitFor(t, 5*time.Second, "the child's pid", func() bool {
		b, err := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && child > 0
	})
	testutil.WaitFor(t, 10*time.Second, fmt.Sprintf("child %d reaped (gone, not a zombie)", child), func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", child))
		return os.IsNotExist(err)
	})
	// It is still running after the reap, blocked in its wait.
	waitBlocked(t, cmd.Process.Pid)
}

// waitBlocked waits until pid runs the program (not sh) and sits in
// rt_sigtimedwait, so its signals are blocked and one sent now is queued.
// (During the wait the kernel shows them unblocked in SigBlk.) Under qemu
// the host's rt_sigtimedwait is seen, made for the program's.
func waitBlocked(t *testing.T, pid int) {
	t.Helper()
	want := fmt.Sprintf("%d ", programs[runtime.GOARCH].waitSyscall)
	testutil.WaitFor(t, 5*time.Second, fmt.Sprintf("pid %d to wait in rt_sigtimedwait", pid), func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/syscall", pid))
		return err == nil && strings.HasPrefix(string(b), want)
	})
}
