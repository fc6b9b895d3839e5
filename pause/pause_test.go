package pause

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
)

// zombie starts a child that exits at once and returns its pid once it is
// a zombie, waiting to be reaped.
func zombie(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	testutil.WaitFor(t, 5*time.Second, fmt.Sprintf("child %d to exit", pid), func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		// The state follows the parenthesised command name.
		return err == nil && strings.HasPrefix(string(b[strings.LastIndexByte(string(b), ')')+1:]), " Z")
	})
	return pid
}

// A SIGCHLD reaps the exited children; SIGTERM (or SIGINT) ends the wait.
func TestWaitReapsUntilTerminated(t *testing.T) {
	for _, stop := range []os.Signal{syscall.SIGTERM, syscall.SIGINT} {
		pid := zombie(t)
		ch := make(chan os.Signal, 2)
		done := make(chan struct{})
		go func() { wait(ch); close(done) }()
		ch <- syscall.SIGCHLD
		ch <- stop
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			close(ch)
			t.Fatalf("wait still running 5s after %v", stop)
		}
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); err != syscall.ECHILD {
			t.Fatalf("child %d not reaped after SIGCHLD: Wait4 %v", pid, err)
		}
	}
}
