package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/berth-dev/berth/kubeapi/stream"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

// Executor runs interactive commands in containers (runtime.Runtime
// satisfies it).
type Executor interface {
	ExecStream(ctx context.Context, id string, o runtime.ExecOptions) (int, error)
}

// ErrAnonymousExec is the 403 answer of /exec, without an admin token, on a
// server that has none (server.token_file unset).
const ErrAnonymousExec = "exec needs server.token_file: berth refuses anonymous exec"

// execDrain bounds how long the server waits, after the status frame, for
// the client to close its side.
const execDrain = 5 * time.Second

var (
	errClientGone  = errors.New("exec client closed the connection")
	errSessionDone = errors.New("exec session ended")
)

// RegisterExec serves POST /exec/{ns}/{pod}/{container} with the kubelet's
// query parameters command (repeated), stdin and tty, speaking ExecProtocol
// after the upgrade. It needs an admin token: 403 with a push token, and
// with none when the server has no admin tokens (exec is never anonymous).
func RegisterExec(s *Server, ex Executor) {
	s.handle("POST /exec/{ns}/{pod}/{container}", accessExec, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveExec(w, r, s.opts.Store, ex)
	}))
}

func serveExec(w http.ResponseWriter, r *http.Request, st *store.Store, ex Executor) {
	cmd := r.URL.Query()["command"]
	if len(cmd) == 0 {
		http.Error(w, "query parameter command: no command given", http.StatusBadRequest)
		return
	}
	var stdin, tty bool
	var err error
	for param, dst := range map[string]*bool{"stdin": &stdin, "tty": &tty} {
		if *dst, err = boolParam(r, param); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	id, code, msg := execTarget(st, r.PathValue("ns"), r.PathValue("pod"), r.PathValue("container"))
	if code != 0 {
		http.Error(w, msg, code)
		return
	}
	if r.ProtoMajor != 1 || !headerHasToken(r.Header, "Connection", "upgrade") || !headerHasToken(r.Header, "Upgrade", ExecProtocol) {
		w.Header().Set("Upgrade", ExecProtocol)
		w.Header().Set("Connection", "Upgrade")
		http.Error(w, "exec needs an HTTP/1.1 upgrade: Connection: Upgrade, Upgrade: "+ExecProtocol, http.StatusUpgradeRequired)
		return
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "exec: cannot take over the connection: "+err.Error(), http.StatusInternalServerError)
		return
	}
	defer conn.Close()
	// The server's read timeout must not cut an interactive session.
	if err := conn.SetDeadline(time.Time{}); err != nil {
		return
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: "+ExecProtocol+"\r\n\r\n"); err != nil {
		return
	}
	runExecSession(r.Context(), conn, brw.Reader, ex, id, runtime.ExecOptions{Cmd: cmd, TTY: tty}, stdin)
}

// execTarget finds the running instance of container name in pod ns/pod
// (its own containers: podIncarnation): its ID, or an HTTP status and
// message.
func execTarget(st *store.Store, ns, pod, name string) (string, int, string) {
	key := ns + "/" + pod
	ctrs, p, err := podIncarnation(st, key)
	if err != nil {
		return "", http.StatusInternalServerError, err.Error()
	}
	var instances []*model.Container
	if name != model.SandboxName {
		instances = stream.Instances(ctrs, name)
	}
	if len(instances) == 0 {
		if p == nil && len(ctrs) == 0 {
			return "", http.StatusNotFound, fmt.Sprintf("pod %s not found", key)
		}
		return "", http.StatusNotFound, fmt.Sprintf("container %q in pod %s not found", name, key)
	}
	if c := stream.RunningInstance(instances); c != nil {
		return c.ID, 0, ""
	}
	return "", http.StatusConflict, fmt.Sprintf("container %q in pod %s is not running (%s)", name, key, instances[0].State)
}

// execStdinQueue is how many stdin frames wait for a command that does not
// read them before the frame reader blocks.
const execStdinQueue = 8

// runExecSession runs the command on the upgraded connection: frames from
// br feed stdin and resizes, output goes out as frames, and the status
// frame ends it. It returns once its goroutines have ended.
func runExecSession(parent context.Context, conn net.Conn, br io.Reader, ex Executor, id string, o runtime.ExecOptions, stdin bool) {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(errSessionDone)
	fw := NewFrameWriter(conn)
	o.Stdout, o.Stderr = fw.Channel(ChanStdout), fw.Channel(ChanStderr)
	var stdinR *io.PipeReader
	var stdinQ chan []byte
	pumpDone := make(chan struct{})
	if stdin {
		var stdinW *io.PipeWriter
		stdinR, stdinW = io.Pipe()
		o.Stdin = stdinR
		stdinQ = make(chan []byte, execStdinQueue)
		go func() {
			defer close(pumpDone)
			pumpStdin(ctx, stdinQ, stdinW)
		}()
	} else {
		close(pumpDone)
	}
	var resize chan runtime.TermSize
	if o.TTY {
		resize = make(chan runtime.TermSize)
		o.Resize = resize
	}
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		readExecFrames(ctx, cancel, br, stdinQ, resize)
	}()

	code, err := ex.ExecStream(ctx, id, o)
	var status ExecStatus
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
			err = cause
		}
		status.Error = err.Error()
	} else {
		status.ExitCode = &code
	}
	cancel(errSessionDone)
	if stdinR != nil {
		// Unblocks the runtime's stdin copy and the pump writing to it.
		_ = stdinR.CloseWithError(errSessionDone)
	}
	b, _ := json.Marshal(status)
	if fw.WriteFrame(ChanStatus, b) == nil {
		// Half-close and let the client read the status and close its
		// side: closing with its frames unread could reset the connection
		// before the status arrives.
		if cw, ok := conn.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	}
	_ = conn.SetReadDeadline(time.Now().Add(execDrain))
	<-readerDone
	<-pumpDone
}

// pumpStdin writes queued stdin frames to w until q is closed (the client
// closed stdin: w is closed) or ctx ends. Once w fails (the command is done
// reading), frames are dropped so that the frame reader never blocks.
func pumpStdin(ctx context.Context, q <-chan []byte, w *io.PipeWriter) {
	failed := false
	for {
		select {
		case <-ctx.Done():
			return
		case p, ok := <-q:
			if !ok {
				_ = w.Close()
				return
			}
			if !failed {
				_, err := w.Write(p)
				failed = err != nil
			}
		}
	}
}

// readExecFrames dispatches client frames until br fails (the client
// closed, or the read deadline set at the end passed); a protocol error or
// the client leaving cancels the session. stdinQ is nil without ?stdin.
func readExecFrames(ctx context.Context, cancel context.CancelCauseFunc, br io.Reader, stdinQ chan<- []byte, resize chan<- runtime.TermSize) {
	stdinOpen := stdinQ != nil
	for {
		ch, p, err := ReadFrame(br)
		if err != nil {
			if errors.Is(err, ErrFrameTooLarge) {
				cancel(fmt.Errorf("exec protocol: %w", err))
			} else {
				cancel(errClientGone)
			}
			return
		}
		switch ch {
		case ChanStdin:
			switch {
			case !stdinOpen:
				// Without ?stdin, or after the client closed it: dropped.
			case len(p) == 0:
				close(stdinQ)
				stdinOpen = false
			default:
				select {
				case stdinQ <- p:
				case <-ctx.Done():
					stdinOpen = false
				}
			}
		case ChanResize:
			var sz runtime.TermSize
			if err := json.Unmarshal(p, &sz); err != nil {
				cancel(fmt.Errorf("exec protocol: resize frame: %w", err))
				continue
			}
			if resize != nil {
				select {
				case resize <- sz:
				case <-ctx.Done():
				}
			}
		default:
			cancel(fmt.Errorf("exec protocol: frame on unknown channel %d", ch))
		}
	}
}

// headerHasToken reports whether the comma-separated header name lists
// token (case-insensitively).
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}
