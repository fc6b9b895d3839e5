package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
)

// execEnv is a berth with a token file and pod "shell": containers main
// and side running testapp sleep, with $WHO set to their name.
type execEnv struct {
	b         *Berth
	tokenFile string
}

func startExecEnv(t *testing.T) *execEnv {
	t.Helper()
	b, tokenFile := startBerthWithToken(t)
	writeFile(t, b.Pods, "shell.yaml", podYAML("shell",
		Ctr{Name: "main", Args: []string{"sleep"}, Env: [][2]string{{"WHO", "main"}}},
		Ctr{Name: "side", Args: []string{"sleep"}, Env: [][2]string{{"WHO", "side"}}},
	))
	waitPodRunning(t, b.Node, "shell", "main", "side")
	e := &execEnv{b: b, tokenFile: tokenFile}
	// /exec finds containers in berth's store: wait until berth reports
	// them running, not only the engine.
	waitFor(t, waitLong, "berth reports shell's containers running", func() (bool, string) {
		var p v1.Pod
		if err := e.b.getJSONAs(e.tokenFile, "/pods/default/shell", &p); err != nil {
			return false, err.Error()
		}
		n := 0
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Running != nil {
				n++
			}
		}
		return n == 2, fmt.Sprintf("%d of 2 running: %+v", n, p.Status.ContainerStatuses)
	})
	return e
}

// execCommand is `berth exec --server ... [--token-file ...] args...`.
func execCommand(ctx context.Context, b *Berth, tokenFile string, args ...string) *exec.Cmd {
	full := []string{"exec", "--server", b.URL("")}
	if tokenFile != "" {
		full = append(full, "--token-file", tokenFile)
	}
	cmd := exec.CommandContext(ctx, berthBin, append(full, args...)...)
	cmd.Env = berthlessEnv()
	return cmd
}

type execRun struct {
	stdout, stderr string
	code           int
}

// berthExec runs berth exec to its end with stdin (nil: none).
func berthExec(t *testing.T, b *Berth, tokenFile string, stdin io.Reader, args ...string) execRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	cmd := execCommand(ctx, b, tokenFile, args...)
	var out, errOut bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("berth exec %v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("berth exec %v did not end within %s; stdout %q stderr %q", args, waitLong, out.String(), errOut.String())
	}
	return execRun{out.String(), errOut.String(), cmd.ProcessState.ExitCode()}
}

func TestExecStreamsAndExitCode(t *testing.T) {
	e := startExecEnv(t)
	run := func(stdin io.Reader, args ...string) execRun {
		t.Helper()
		return berthExec(t, e.b, e.tokenFile, stdin, args...)
	}

	// Without -c, kubectl's note names the choice on stderr.
	const note = "Defaulted container \"main\" out of: main, side\n"
	if r := run(nil, "shell", "--", "/testapp", "getenv", "WHO"); r != (execRun{"main\n", note, 0}) {
		t.Errorf("without -c (the first container): %+v", r)
	}
	if r := run(nil, "shell", "-c", "side", "-n", "default", "--", "/testapp", "getenv", "WHO"); r != (execRun{"side\n", "", 0}) {
		t.Errorf("-c side: %+v", r)
	}

	data := make([]byte, 5<<20/2+321) // several frames
	_, _ = rand.Read(data)
	r := run(bytes.NewReader(data), "-i", "shell", "--", "/testapp", "cat")
	if r.code != 0 || r.stdout != string(data) {
		t.Errorf("cat of %d bytes: exit %d, %d bytes on stdout, stderr %q", len(data), r.code, len(r.stdout), r.stderr)
	}
	if want := fmt.Sprintf(note+"cat: %d bytes\n", len(data)); r.stderr != want {
		t.Errorf("cat: stderr %q, want %q", r.stderr, want)
	}

	if r := run(nil, "shell", "--", "/testapp", "exit", "3"); r != (execRun{"testapp exit starting\n", note + "testapp exit stderr\n", 3}) {
		t.Errorf("exit 3: %+v", r)
	}
	if r := run(nil, "shell", "--", "/testapp", "bogus-mode"); r.code != 2 || !strings.Contains(r.stderr, `unknown mode "bogus-mode"`) {
		t.Errorf("unknown mode: %+v", r)
	}

	if r := run(nil, "shell", "--", "/testapp", "isatty"); r != (execRun{"stdin=false stdout=false stderr=false\n", note, 0}) {
		t.Errorf("isatty without -t: %+v", r)
	}
	if r := run(nil, "-t", "shell", "--", "/testapp", "isatty"); r != (execRun{"stdin=true stdout=true stderr=true\r\n", note, 0}) {
		t.Errorf("isatty with -t: %+v", r)
	}

	if r := run(nil, "nope", "--", "/testapp", "isatty"); r.code != 1 || !strings.Contains(r.stderr, `Error from server (NotFound): pods "nope" not found`) {
		t.Errorf("unknown pod: %+v", r)
	}
	if r := run(nil, "shell", "-c", "nope", "--", "/testapp", "isatty"); r.code != 1 || !strings.Contains(r.stderr, `Error from server (BadRequest): container nope is not valid for pod shell`) {
		t.Errorf("unknown container: %+v", r)
	}
	if r := berthExec(t, e.b, "", nil, "shell", "-c", "main", "--", "/testapp", "isatty"); r.code != 1 || !strings.Contains(r.stderr, "401 Unauthorized") {
		t.Errorf("without a token: %+v", r)
	}
	wrong := filepath.Join(t.TempDir(), "wrong")
	_ = os.WriteFile(wrong, []byte("not-the-token\n"), 0o600)
	if r := berthExec(t, e.b, wrong, nil, "shell", "-c", "main", "--", "/testapp", "isatty"); r.code != 1 || !strings.Contains(r.stderr, "401 Unauthorized") {
		t.Errorf("with a wrong token: %+v", r)
	}
}

func TestExecRefusedWithoutTokenFile(t *testing.T) {
	b := startBerth(t, Options{})
	writeFile(t, b.Pods, "open.yaml", podYAML("open", Ctr{Name: "main", Args: []string{"sleep"}}))
	waitPodRunning(t, b.Node, "open", "main")
	r := berthExec(t, b, "", nil, "open", "-c", "main", "--", "/testapp", "isatty")
	if r.code != 1 || !strings.Contains(r.stderr, "Error from server (Forbidden): exec needs server.token_file: berth refuses anonymous exec") {
		t.Fatalf("exec on a berth without token file: %+v", r)
	}
}

// TestExecTerminal runs berth exec -i -t on a local pseudo-terminal: the
// command gets its size, follows a resize, and the local terminal is back
// in its mode afterwards.
func TestExecTerminal(t *testing.T) {
	e := startExecEnv(t)
	master, slave := openPTY(t)
	setSize(t, master, 100, 37)
	before := termios(t, master)

	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	cmd := execCommand(ctx, e.b, e.tokenFile, "-i", "-t", "shell", "--", "/testapp", "size")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	out := &testutil.SyncBuffer{}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, master) // ends with EIO once berth exec is gone
	}()
	waitFor(t, 30*time.Second, "the initial size in the container", func() (bool, string) {
		return strings.Contains(out.String(), "size 100x37\r\n"), out.String()
	})
	if raw := termios(t, master); raw.Lflag&(unix.ICANON|unix.ECHO) != 0 {
		t.Errorf("local terminal not in raw mode during exec: lflag %#x", raw.Lflag)
	}
	setSize(t, master, 120, 40) // SIGWINCH to berth exec
	waitFor(t, 30*time.Second, "the resize in the container", func() (bool, string) {
		return strings.Contains(out.String(), "size 120x40\r\n"), out.String()
	})
	if _, err := master.Write([]byte("q\r")); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("berth exec -i -t: %v; output %q", err, out.String())
	}
	<-copied
	if after := termios(t, master); after.Lflag != before.Lflag || after.Iflag != before.Iflag || after.Oflag != before.Oflag {
		t.Errorf("local terminal mode not restored: lflag %#x → %#x, iflag %#x → %#x", before.Lflag, after.Lflag, before.Iflag, after.Iflag)
	}
}

// openPTY opens a pseudo-terminal pair; the master is pollable.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close() })
	var n uint32
	control(t, master, func(fd int) error {
		if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
			return err
		}
		n, err = unix.IoctlGetUint32(fd, unix.TIOCGPTN)
		return err
	})
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return master, slave
}

func control(t *testing.T, f *os.File, fn func(fd int) error) {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		t.Fatal(err)
	}
	if ferr != nil {
		t.Fatal(ferr)
	}
}

func setSize(t *testing.T, master *os.File, w, h uint16) {
	t.Helper()
	control(t, master, func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Col: w, Row: h})
	})
}

func termios(t *testing.T, master *os.File) unix.Termios {
	t.Helper()
	var tio *unix.Termios
	control(t, master, func(fd int) (err error) {
		tio, err = unix.IoctlGetTermios(fd, unix.TCGETS)
		return err
	})
	return *tio
}
