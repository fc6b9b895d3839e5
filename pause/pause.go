// Package pause is PID 1 of every pod sandbox: it holds the pod's
// namespaces until SIGTERM or SIGINT and, as PID 1 of a shared PID
// namespace, reaps the orphans reparented to it. The image berth builds
// holds a native program of a few hundred bytes (Program) where berth has
// one for the architecture, else berth itself run as `berth pause` (Run).
package pause

import (
	"os"
	"os/signal"
	"syscall"
)

// Run blocks until SIGTERM or SIGINT, reaping exited children on every
// SIGCHLD. It takes those signals for the whole process: run it only as
// the process's one job, never inside the agent.
func Run() {
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	wait(ch)
}

// wait reaps on each SIGCHLD from ch and returns at any other signal.
func wait(ch <-chan os.Signal) {
	for s := range ch {
		if s != syscall.SIGCHLD {
			return
		}
		reapChildren()
	}
}

// reapChildren waits for every exited child; signals coalesce, so one
// SIGCHLD may stand for many.
func reapChildren() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
