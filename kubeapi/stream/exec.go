package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	remotecommandconsts "k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/wsstream"

	"github.com/berth-dev/berth/kubeapi/apierr"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

// execQuery is a parsed pods/exec request.
type execQuery struct {
	command                    []string
	container                  string
	stdin, stdout, stderr, tty bool
}

// parseExecQuery reads the query as the kubelet does: with a TTY, stderr
// is merged into stdout and never a stream of its own. Attach (!command)
// takes no command.
func parseExecQuery(r *http.Request, command bool) (execQuery, error) {
	q := execQuery{command: r.URL.Query()["command"], container: r.URL.Query().Get("container")}
	var err error
	for name, dst := range map[string]*bool{"stdin": &q.stdin, "stdout": &q.stdout, "stderr": &q.stderr, "tty": &q.tty} {
		if *dst, err = queryBool(r, name); err != nil {
			return q, err
		}
	}
	if command && (len(q.command) == 0 || q.command[0] == "") {
		return q, apierrors.NewBadRequest("you must specify at least one command for the container")
	}
	if q.tty {
		q.stderr = false
	}
	if !q.stdin && !q.stdout && !q.stderr {
		return q, apierrors.NewBadRequest("you must specify at least 1 of stdin, stdout, stderr")
	}
	return q, nil
}

// execSession is the negotiated streams of one exec, whatever carries
// them (WebSocket or SPDY). Streams not asked for are nil.
type execSession struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// resize carries JSON terminal sizes (nil without a TTY).
	resize io.Reader
	// writeStatus reports the outcome on the error stream.
	writeStatus func(*apierrors.StatusError) error
	// close ends the connection, unblocking every read of the streams.
	close func() error
	// gone is closed when the client closed the connection.
	gone <-chan struct{}
}

// serveExec answers pods/{name}/exec: it negotiates the streams (WebSocket
// first, as kubectl tries it, or SPDY) and runs the command in the
// container's running instance.
func (s *streams) serveExec(w http.ResponseWriter, r *http.Request) {
	s.serveSession(w, r, true, func(ctx context.Context, id string, q execQuery, sess *execSession) {
		code, err := s.rt.ExecStream(ctx, id, sess.options(ctx, q))
		_ = sess.writeStatus(execStatus(code, err))
	})
}

// serveSession checks the request, negotiates the streams and calls run
// with them; a client that goes cancels run's context.
func (s *streams) serveSession(w http.ResponseWriter, r *http.Request, command bool, run func(context.Context, string, execQuery, *execSession)) {
	p, err := s.pod(r)
	if err != nil {
		apierr.WriteError(w, err)
		return
	}
	q, err := parseExecQuery(r, command)
	if err != nil {
		apierr.WriteError(w, err)
		return
	}
	name, err := containerOf(p.Spec, q.container)
	if err != nil {
		apierr.WriteError(w, err)
		return
	}
	id, err := s.runningInstance(p, name)
	if err != nil {
		apierr.WriteError(w, err)
		return
	}
	var sess *execSession
	switch {
	case wsstream.IsWebSocketRequest(r):
		sess = openWebSocketExec(w, r, q)
	case httpstream.IsUpgradeRequest(r):
		sess = openSPDYExec(w, r, q)
	default:
		apierr.WriteError(w, apierrors.NewBadRequest("Upgrade request required"))
		return
	}
	if sess == nil {
		return // the negotiation answered the client
	}
	defer sess.close()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		// A client that goes ends the session, as kubectl's Ctrl-C hangs
		// up a shell.
		select {
		case <-sess.gone:
			cancel()
		case <-ctx.Done():
		}
	}()
	run(ctx, id, q, sess)
}

// runningInstance returns the ID of the running instance of container name
// of p's incarnation.
func (s *streams) runningInstance(p *model.Pod, name string) (string, error) {
	ctrs, err := s.podContainers(p)
	if err != nil {
		return "", err
	}
	inst := Instances(ctrs, name)
	if len(inst) == 0 {
		return "", waitingError(p, name)
	}
	c := RunningInstance(inst)
	if c == nil {
		return "", apierrors.NewBadRequest(fmt.Sprintf("container %q in pod %q is not running (%s)", name, p.Spec.Name, inst[0].State))
	}
	return c.ID, nil
}

// options are the session's streams as q asks for them; resizes are
// decoded until ctx ends.
func (sess *execSession) options(ctx context.Context, q execQuery) runtime.ExecOptions {
	o := runtime.ExecOptions{Cmd: q.command, TTY: q.tty}
	if q.stdin {
		o.Stdin = sess.stdin
	}
	if q.stdout {
		o.Stdout = sess.stdout
	}
	if q.stderr {
		o.Stderr = sess.stderr
	}
	if q.tty && sess.resize != nil {
		ch := make(chan runtime.TermSize)
		o.Resize = ch
		go decodeResizes(ctx, sess.resize, ch)
	}
	return o
}

// execStatus is the kubelet's status of an exec that ended with code/err.
func execStatus(code int, err error) *apierrors.StatusError {
	switch {
	case err != nil:
		if errors.Is(err, runtime.ErrNotRunning) || errors.Is(err, runtime.ErrNotFound) {
			return apierrors.NewBadRequest(fmt.Sprintf("error executing command in container: %v", err))
		}
		return apierrors.NewInternalError(fmt.Errorf("error executing command in container: %w", err))
	case code != 0:
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status:  metav1.StatusFailure,
			Reason:  remotecommandconsts.NonZeroExitCodeReason,
			Message: fmt.Sprintf("command terminated with non-zero exit code: error executing command, exit status %d", code),
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{
				Type: remotecommandconsts.ExitCodeCauseType, Message: strconv.Itoa(code),
			}}},
		}}
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusSuccess}}
}

// decodeResizes sends every JSON size read from r ({"Width":..,"Height":..})
// to ch until r ends or ctx is done.
func decodeResizes(ctx context.Context, r io.Reader, ch chan<- runtime.TermSize) {
	dec := json.NewDecoder(r)
	for {
		var sz struct{ Width, Height uint16 }
		if err := dec.Decode(&sz); err != nil {
			return
		}
		select {
		case ch <- runtime.TermSize{Width: sz.Width, Height: sz.Height}:
		case <-ctx.Done():
			return
		}
	}
}

// statusWriterV4 writes the Status as JSON (protocols v4 and v5).
func statusWriterV4(w io.Writer) func(*apierrors.StatusError) error {
	return func(st *apierrors.StatusError) error {
		s := st.Status()
		b, err := json.Marshal(&s)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
}

// statusWriterV1 writes only a failure's message (protocols before v4).
func statusWriterV1(w io.Writer) func(*apierrors.StatusError) error {
	return func(st *apierrors.StatusError) error {
		if st.Status().Status == metav1.StatusSuccess {
			return nil
		}
		_, err := w.Write([]byte(st.Error()))
		return err
	}
}
