package cli

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/server"
)

// execFlags are berth exec's own flags.
type execFlags struct {
	namespace string
	container string
	stdin     bool
	tty       bool
}

func execCmd() *cobra.Command {
	var c apiClient
	var f execFlags
	cmd := &cobra.Command{
		Use:   "exec POD [-c CONTAINER] [-n NAMESPACE] [-i] [-t] -- COMMAND [ARG...]",
		Short: "Run a command in a container of a pod, through berth's API",
		Long: "Run a command in a running container of a pod, streaming stdin (-i), stdout and stderr,\n" +
			"with a terminal (-t); berth exec exits with the command's exit code. The container\n" +
			"defaults to the pod's first. berth's API needs server.token_file for exec.",
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash > 1 {
				return fmt.Errorf("exec: one POD before --, got %q", args[:dash])
			}
			return runExec(cmd.Context(), &c, f, args[0], args[1:])
		},
	}
	c.addFlags(cmd.Flags())
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "default", "namespace of the pod")
	cmd.Flags().StringVarP(&f.container, "container", "c", "", "container name (default: the pod's first)")
	cmd.Flags().BoolVarP(&f.stdin, "stdin", "i", false, "pass stdin to the command")
	cmd.Flags().BoolVarP(&f.tty, "tty", "t", false, "give the command a terminal")
	return cmd
}

// exitCodeError carries a remote command's non-zero exit code to Main,
// which exits with it.
type exitCodeError struct{ code int }

func (e *exitCodeError) Error() string { return fmt.Sprintf("command exited with code %d", e.code) }

// remoteExit reports the exit code err carries, if it is a remote
// command's exit.
func remoteExit(err error) (int, bool) {
	var e *exitCodeError
	if errors.As(err, &e) {
		return e.code, true
	}
	return 0, false
}

func runExec(ctx context.Context, c *apiClient, f execFlags, pod string, command []string) error {
	if f.container == "" {
		name, err := defaultContainer(ctx, c, f.namespace, pod, os.Stderr)
		if err != nil {
			return err
		}
		f.container = name
	}
	if f.tty && f.stdin && !term.IsTerminal(int(os.Stdin.Fd())) {
		// As kubectl: a terminal would never pass on the input's end.
		fmt.Fprintln(os.Stderr, "Unable to use a TTY - input is not a terminal or the right kind of file")
		f.tty = false
	}
	q := url.Values{"command": command}
	if f.stdin {
		q.Set("stdin", "1")
	}
	if f.tty {
		q.Set("tty", "1")
	}
	path := "/exec/" + url.PathEscape(f.namespace) + "/" + url.PathEscape(pod) + "/" + url.PathEscape(f.container) + "?" + q.Encode()
	req, err := c.newRequest(ctx, http.MethodPost, path, nil)
	if err != nil {
		return err
	}

	// The local terminal whose size the command gets, if any; watched from
	// before the session starts so that no resize is missed.
	termFd, haveTerm := -1, false
	if f.tty {
		for _, fd := range []int{int(os.Stdin.Fd()), int(os.Stdout.Fd())} {
			if term.IsTerminal(fd) {
				termFd, haveTerm = fd, true
				break
			}
		}
	}
	var winch chan os.Signal
	if haveTerm {
		winch = make(chan os.Signal, 1)
		signal.Notify(winch, syscall.SIGWINCH)
		defer signal.Stop(winch)
	}

	conn, br, err := dialUpgrade(ctx, c, req)
	if err != nil {
		return err
	}
	defer conn.Close()
	fw := server.NewFrameWriter(conn)

	if f.tty && f.stdin && term.IsTerminal(int(os.Stdin.Fd())) {
		old, err := term.MakeRaw(int(os.Stdin.Fd()))
		if err != nil {
			return fmt.Errorf("exec: raw terminal mode: %w", err)
		}
		defer term.Restore(int(os.Stdin.Fd()), old)
	}
	done := make(chan struct{})
	defer close(done)
	if haveTerm {
		sendSize(fw, termFd)
		go func() {
			for {
				select {
				case <-done:
					return
				case <-winch:
					sendSize(fw, termFd)
				}
			}
		}()
	}
	if f.stdin {
		// Ends at stdin's EOF or when the connection is closed; a read
		// blocked on a terminal ends with the process.
		go pumpStdin(fw, os.Stdin)
	}
	return readExecOutput(c, br, os.Stdout, os.Stderr)
}

// dialUpgrade sends req as an upgrade to server.ExecProtocol on a
// connection of its own (HTTP/1.1 also over TLS, where http.Client would
// negotiate HTTP/2) and returns it after the server's 101.
func dialUpgrade(ctx context.Context, c *apiClient, req *http.Request) (net.Conn, *bufio.Reader, error) {
	u := req.URL
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	d := &net.Dialer{Timeout: 10 * time.Second}
	var conn net.Conn
	var err error
	switch u.Scheme {
	case "http":
		conn, err = d.DialContext(ctx, "tcp", addr)
	case "https":
		td := &tls.Dialer{NetDialer: d, Config: &tls.Config{ServerName: u.Hostname(), NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12}}
		conn, err = td.DialContext(ctx, "tcp", addr)
	default:
		return nil, nil, fmt.Errorf("--server %s: scheme must be http or https", c.server)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w at %s: %v", errUnreachable, c.server, err)
	}
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", server.ExecProtocol)
	br := bufio.NewReader(conn)
	var resp *http.Response
	if err = req.Write(conn); err == nil {
		resp, err = http.ReadResponse(br, req)
	}
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("%w at %s: %v", errUnreachable, c.server, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer conn.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, nil, fmt.Errorf("berth at %s: %s: %s", c.server, resp.Status, strings.TrimSpace(string(msg)))
	}
	_ = conn.SetDeadline(time.Time{})
	return conn, br, nil
}

// sendSize sends the size of terminal fd as a resize frame.
func sendSize(fw *server.FrameWriter, fd int) {
	w, h, err := term.GetSize(fd)
	if err != nil || w <= 0 || h <= 0 || w > 0xffff || h > 0xffff {
		return
	}
	b, _ := json.Marshal(runtime.TermSize{Width: uint16(w), Height: uint16(h)})
	_ = fw.WriteFrame(server.ChanResize, b)
}

// pumpStdin copies r to the stdin channel and closes it at EOF.
func pumpStdin(fw *server.FrameWriter, r io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if fw.WriteFrame(server.ChanStdin, buf[:n]) != nil {
				return
			}
		}
		if err != nil {
			if err == io.EOF {
				_ = fw.WriteFrame(server.ChanStdin, nil)
			}
			return
		}
	}
}

// readExecOutput copies the output channels to stdout and stderr until the
// status frame, and returns the command's outcome: nil for exit code 0, an
// exitCodeError for another.
func readExecOutput(c *apiClient, br io.Reader, stdout, stderr io.Writer) error {
	for {
		ch, p, err := server.ReadFrame(br)
		if err != nil {
			if err == io.EOF {
				return fmt.Errorf("berth at %s: exec stream ended without a status", c.server)
			}
			return fmt.Errorf("berth at %s: exec stream: %w", c.server, err)
		}
		switch ch {
		case server.ChanStdout:
			if _, err := stdout.Write(p); err != nil {
				return fmt.Errorf("exec: stdout: %w", err)
			}
		case server.ChanStderr:
			if _, err := stderr.Write(p); err != nil {
				return fmt.Errorf("exec: stderr: %w", err)
			}
		case server.ChanStatus:
			var st server.ExecStatus
			if err := json.Unmarshal(p, &st); err != nil {
				return fmt.Errorf("berth at %s: exec status %q: %w", c.server, p, err)
			}
			switch {
			case st.Error != "":
				return fmt.Errorf("exec: %s", st.Error)
			case st.ExitCode == nil:
				return fmt.Errorf("berth at %s: exec status %q without an exit code", c.server, p)
			case *st.ExitCode != 0:
				return &exitCodeError{*st.ExitCode}
			}
			return nil
		default:
			return fmt.Errorf("berth at %s: exec stream: frame on unknown channel %d", c.server, ch)
		}
	}
}
