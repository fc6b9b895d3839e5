package stream

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/berth-dev/berth/kubeapi/apierr"
	"github.com/berth-dev/berth/runtime"
)

// logQuery is a parsed pods/log request.
type logQuery struct {
	container  string
	follow     bool
	previous   bool
	timestamps bool
	tail       int // < 0: all
	since      time.Time
	limitBytes int64 // 0: no limit
}

func parseLogQuery(r *http.Request, now time.Time) (logQuery, error) {
	q := logQuery{container: r.URL.Query().Get("container"), tail: -1}
	var err error
	for name, dst := range map[string]*bool{"follow": &q.follow, "previous": &q.previous, "timestamps": &q.timestamps} {
		if *dst, err = queryBool(r, name); err != nil {
			return q, err
		}
	}
	pos := func(name string, min int64) (int64, bool, error) {
		v := r.URL.Query().Get(name)
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < min {
			return 0, false, apierrors.NewBadRequest(fmt.Sprintf("query parameter %s: %q must be an integer of at least %d", name, v, min))
		}
		return n, true, nil
	}
	if n, ok, err := pos("tailLines", 0); err != nil {
		return q, err
	} else if ok {
		q.tail = int(min(n, 1<<31-1))
	}
	if q.limitBytes, _, err = pos("limitBytes", 1); err != nil {
		return q, err
	}
	secs, hasSecs, err := pos("sinceSeconds", 1)
	if err != nil {
		return q, err
	}
	st := r.URL.Query().Get("sinceTime")
	switch {
	case hasSecs && st != "":
		return q, apierrors.NewBadRequest("at most one of sinceTime or sinceSeconds may be specified")
	case hasSecs:
		q.since = now.Add(-time.Duration(min(secs, int64(time.Duration(1<<62)/time.Second))) * time.Second)
	case st != "":
		if q.since, err = time.Parse(time.RFC3339, st); err != nil {
			return q, apierrors.NewBadRequest(fmt.Sprintf("query parameter sinceTime: %q is not an RFC 3339 time", st))
		}
	}
	return q, nil
}

// serveLog answers GET pods/{name}/log as the apiserver does: the log of
// the current (or ?previous) instance of the container, streamed until the
// container stops or the client goes with ?follow.
func (s *streams) serveLog(w http.ResponseWriter, r *http.Request) {
	p, err := s.pod(r)
	if err != nil {
		apierr.WriteError(w, err)
		return
	}
	q, err := parseLogQuery(r, s.o.Clock.Now())
	if err != nil {
		apierr.WriteError(w, err)
		return
	}
	name, err := containerOf(p.Spec, q.container)
	if err != nil {
		apierr.WriteError(w, err)
		return
	}
	ctrs, err := s.podContainers(p)
	if err != nil {
		apierr.WriteError(w, err)
		return
	}
	inst, err := LogInstance(p, ctrs, name, q.previous)
	if err != nil {
		apierr.WriteError(w, err)
		return
	}
	filter := !q.since.IsZero()
	rc, err := s.rt.Logs(r.Context(), inst.ID, runtime.LogOptions{Follow: q.follow, TailLines: q.tail, Timestamps: q.timestamps || filter})
	if err != nil {
		if errors.Is(err, runtime.ErrNotFound) {
			err = apierrors.NewBadRequest(fmt.Sprintf("container %q in pod %q: %v", name, p.Spec.Name, err))
		}
		apierr.WriteError(w, err)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	var out io.Writer = w
	if q.follow {
		out = &flushWriter{w: w, rc: http.NewResponseController(w)}
	}
	if q.limitBytes > 0 {
		out = &limitWriter{w: out, n: q.limitBytes}
	}
	if filter {
		_ = copySince(out, rc, q.since, q.timestamps)
		return
	}
	_, _ = io.Copy(out, rc)
}

// logChunk is the buffer of a since-filtered log: however long a line is,
// it is copied (or skipped) this many bytes at a time, never held whole.
const logChunk = 32 << 10

// stampMax bounds the word that leads a line and may be its timestamp:
// RFC 3339 with nanoseconds and a zone offset takes 35 bytes.
const stampMax = 64

// copySince copies the lines of src (each led by an RFC 3339 timestamp and
// a space) stamped at or after since, without their stamp unless keep.
// Lines without a readable stamp are kept. It holds at most logChunk bytes
// of src: a line is decided on its first word and then streamed.
func copySince(dst io.Writer, src io.Reader, since time.Time, keep bool) error {
	br := bufio.NewReaderSize(src, logChunk)
	for {
		head, err := lineHead(br)
		if len(head) == 0 {
			if err == io.EOF {
				return nil
			}
			return err
		}
		write := true
		if i := len(head) - 1; i > 0 && head[i] == ' ' {
			if t, perr := time.Parse(time.RFC3339Nano, string(head[:i])); perr == nil {
				switch {
				case t.Before(since):
					write = false
				case !keep:
					_, _ = br.Discard(i + 1) // buffered: cannot fail
				}
			}
		}
		if err := copyLine(dst, br, write); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// lineHead peeks at the start of br's next line: up to and including its
// first space or newline, or stampMax bytes when neither comes first
// (fewer at the end of the input, with its error). It reads no more than
// that needs, so a followed line is decided as soon as its stamp is in.
func lineHead(br *bufio.Reader) ([]byte, error) {
	n := 1
	for {
		b, err := br.Peek(n)
		if i := bytes.IndexAny(b, " \n"); i >= 0 {
			return b[:i+1], nil
		}
		if err != nil || len(b) >= stampMax {
			return b, err
		}
		n = min(max(br.Buffered(), len(b)+1), stampMax)
	}
}

// copyLine copies the rest of br's current line, its newline included, to
// dst (or skips it unless write), a buffer at a time. io.EOF: the input
// ended.
func copyLine(dst io.Writer, br *bufio.Reader, write bool) error {
	for {
		chunk, err := br.ReadSlice('\n')
		if write && len(chunk) > 0 {
			if _, werr := dst.Write(chunk); werr != nil {
				return werr
			}
		}
		if err != bufio.ErrBufferFull {
			return err // nil once the line ended
		}
	}
}

// flushWriter flushes after every write so that followed logs arrive as
// they are written.
type flushWriter struct {
	w  io.Writer
	rc *http.ResponseController
}

func (f *flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err == nil {
		err = f.rc.Flush()
	}
	return n, err
}

// errLimitReached ends a copy once limitBytes were written.
var errLimitReached = errors.New("limitBytes reached")

// limitWriter writes at most n bytes, then fails.
type limitWriter struct {
	w io.Writer
	n int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errLimitReached
	}
	short := int64(len(p)) > l.n
	if short {
		p = p[:l.n]
	}
	n, err := l.w.Write(p)
	l.n -= int64(n)
	if err == nil && short {
		err = errLimitReached
	}
	return n, err
}
