package stream

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// hugeLine is a log, made as it is read: the line "stamp " followed by n
// bytes 'x' and a newline, then tail. With out set, a Read fails once more
// than ahead bytes were read beyond what out was given: a copy that holds
// more than that of a line fails instead of growing.
type hugeLine struct {
	head, tail []byte
	n, off     int64 // off counts the x bytes read
	stage      int   // 0 head, 1 xs, 2 newline, 3 tail, 4 end
	read       int64
	out        *countWriter
	ahead      int64
}

func newHugeLine(stamp string, n int64, tail string) *hugeLine {
	return &hugeLine{head: []byte(stamp + " "), n: n, tail: []byte(tail)}
}

var errReadAhead = errors.New("read ahead of the output")

// xs is what hugeLine's line is made of.
var xs = bytes.Repeat([]byte{'x'}, 64<<10)

func (h *hugeLine) Read(p []byte) (int, error) {
	if h.out != nil && h.read-h.out.n > h.ahead {
		return 0, fmt.Errorf("%w: %d bytes read, %d written", errReadAhead, h.read, h.out.n)
	}
	n := 0
	for n < len(p) && h.stage < 4 {
		switch h.stage {
		case 0:
			c := copy(p[n:], h.head)
			h.head, n = h.head[c:], n+c
			if len(h.head) == 0 {
				h.stage = 1
			}
		case 1:
			c := copy(p[n:min(len(p), n+int(min(h.n-h.off, 1<<30)))], xs)
			h.off, n = h.off+int64(c), n+c
			if h.off == h.n {
				h.stage = 2
			}
		case 2:
			p[n], n, h.stage = '\n', n+1, 3
		case 3:
			c := copy(p[n:], h.tail)
			h.tail, n = h.tail[c:], n+c
			if len(h.tail) == 0 {
				h.stage = 4
			}
		}
	}
	h.read += int64(n)
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// countWriter counts what it is given and keeps its first 16 and last 64
// bytes.
type countWriter struct {
	n          int64
	head, last bytes.Buffer
}

func (w *countWriter) Write(p []byte) (int, error) {
	if k := 16 - w.head.Len(); k > 0 {
		w.head.Write(p[:min(k, len(p))])
	}
	w.last.Write(p[max(0, len(p)-64):])
	if w.last.Len() > 64 {
		b := w.last.Bytes()[w.last.Len()-64:]
		w.last.Reset()
		w.last.Write(b)
	}
	w.n += int64(len(p))
	return len(p), nil
}

// A line kept by sinceTime is streamed as it is read: copySince never
// holds more of it than a buffer, however long it is (1 GiB here, made as
// it is read, without a newline until its end).
func TestCopySinceStreamsLongLine(t *testing.T) {
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, keep := range []bool{false, true} {
		out := &countWriter{}
		src := newHugeLine("2026-01-02T03:04:06Z", 1<<30, "2026-01-02T03:04:07Z after\n")
		src.out, src.ahead = out, 256<<10
		if err := copySince(out, src, since, keep); err != nil {
			t.Fatalf("keep %t: %v", keep, err)
		}
		wantHead, wantTail, wantLen := "xxxxxxxxxxxxxxxx", "xx\nafter\n", int64(1<<30)+1+int64(len("after\n"))
		if keep {
			wantHead, wantTail = "2026-01-02T03:04", "xx\n2026-01-02T03:04:07Z after\n"
			wantLen += 2 * int64(len("2026-01-02T03:04:06Z "))
		}
		if out.n != wantLen || out.head.String() != wantHead || !strings.HasSuffix(out.last.String(), wantTail) {
			t.Errorf("keep %t: %d bytes, head %q, end %q; want %d bytes, head %q, end %q", keep, out.n, out.head.String(), out.last.String(), wantLen, wantHead, wantTail)
		}
	}
}

// A line dropped by sinceTime is skipped as it is read: copySince
// allocates a buffer, not the line (256 MiB here).
func TestCopySinceSkipsLongLine(t *testing.T) {
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	src := newHugeLine("2026-01-02T03:04:00Z", 256<<20, "2026-01-02T03:04:07Z after\n")
	var out bytes.Buffer
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := copySince(&out, src, since, false)
	runtime.ReadMemStats(&after)
	if err != nil || out.String() != "after\n" {
		t.Fatalf("%q %v", out.String(), err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("skipping a 256 MiB line allocated %d bytes", alloc)
	}
}

// copySinceLines is copySince as a reading of whole lines, for comparison.
func copySinceLines(src string, since time.Time, keep bool) string {
	var out strings.Builder
	for _, line := range strings.SplitAfter(src, "\n") {
		if i := strings.IndexByte(line, ' '); i > 0 && (strings.IndexByte(line, '\n') < 0 || i < strings.IndexByte(line, '\n')) {
			if t, err := time.Parse(time.RFC3339Nano, line[:i]); err == nil {
				if t.Before(since) {
					continue
				}
				if !keep {
					line = line[i+1:]
				}
			}
		}
		out.WriteString(line)
	}
	return out.String()
}

// The bounded copy filters as a reading of whole lines does, however the
// input arrives: lines without a stamp, with a stamp-like word too long to
// be one, empty lines, a last line without a newline, stamps in other
// zones.
func TestCopySinceLines(t *testing.T) {
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	long := strings.Repeat("y", 100)
	src := "2026-01-02T03:04:00Z old\n" +
		"no stamp here\n" +
		"\n" +
		"2026-01-02T03:04:05Z at\n" +
		"2026-01-02T04:04:04.5+01:00 an hour ahead, so before\n" +
		"2026-01-02T03:04:05.000000001Z " + long + "\n" +
		long + " " + long + "\n" +
		"nospace\n" +
		" leading space\n" +
		"2026-01-02T03:04:06Z\n" +
		"2026-01-02T03:04:07Z last without newline"
	for _, keep := range []bool{false, true} {
		want := copySinceLines(src, since, keep)
		for name, r := range map[string]func() io.Reader{
			"whole":    func() io.Reader { return strings.NewReader(src) },
			"one byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(src)) },
			"half":     func() io.Reader { return iotest.HalfReader(strings.NewReader(src)) },
		} {
			var out bytes.Buffer
			if err := copySince(&out, r(), since, keep); err != nil || out.String() != want {
				t.Errorf("keep %t, %s reads: %q %v\nwant %q", keep, name, out.String(), err, want)
			}
		}
	}
	if want := "at\n"; !strings.Contains(copySinceLines(src, since, false), want) {
		t.Fatalf("reference lost %q", want)
	}
}

// A followed log's line is written once its stamp was read, before the
// next line (or the end) arrives.
func TestCopySinceWritesWithoutWaiting(t *testing.T) {
	pr, pw := io.Pipe()
	out := make(chan string, 1)
	done := make(chan error, 1)
	w := writerFunc(func(p []byte) (int, error) {
		out <- string(p)
		return len(p), nil
	})
	go func() { done <- copySince(w, bufio.NewReader(pr), time.Time{}, false) }()
	if _, err := pw.Write([]byte("2026-01-02T03:04:06Z hi\n")); err != nil {
		t.Fatal(err)
	}
	if got := <-out; got != "hi\n" {
		t.Errorf("first line %q", got)
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
