package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// The exec protocol, berth-exec.v1. The client sends
// POST /exec/{ns}/{pod}/{container}?command=...[&stdin=1][&tty=1] over
// HTTP/1.1 with "Connection: Upgrade" and "Upgrade: berth-exec.v1"; the
// server answers 101 Switching Protocols and both sides then exchange
// frames: 1 byte channel, 4 bytes big-endian payload length, the payload
// (at most MaxFrame bytes; a bigger frame is a protocol error). Channels
// are numbered as in Kubernetes' channel protocol v5:
//
//	0 stdin   client→server; a zero-length frame closes the command's stdin
//	1 stdout  server→client
//	2 stderr  server→client (not used with a TTY)
//	3 status  server→client, the last frame: JSON ExecStatus
//	4 resize  client→server, JSON runtime.TermSize {"width":W,"height":H}
//
// The client keeps its side of the connection open until it has read the
// status frame; closing it earlier ends the session.
const ExecProtocol = "berth-exec.v1"

// Exec protocol channels.
const (
	ChanStdin  byte = 0
	ChanStdout byte = 1
	ChanStderr byte = 2
	ChanStatus byte = 3
	ChanResize byte = 4
)

// MaxFrame is the largest payload of one frame.
const MaxFrame = 1 << 20

// ErrFrameTooLarge is returned (wrapped) for a frame over MaxFrame.
var ErrFrameTooLarge = errors.New("exec frame too large")

// ExecStatus is the status frame: exactly one of ExitCode and Error is set.
type ExecStatus struct {
	ExitCode *int   `json:"exitCode,omitempty"`
	Error    string `json:"error,omitempty"`
}

// ReadFrame reads one frame. It returns io.EOF only when r ended cleanly
// before a frame, io.ErrUnexpectedEOF inside one, and ErrFrameTooLarge
// (without reading the payload) for a length over MaxFrame.
func ReadFrame(r io.Reader) (ch byte, payload []byte, err error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > MaxFrame {
		return 0, nil, fmt.Errorf("%w: %d bytes on channel %d, limit %d", ErrFrameTooLarge, n, hdr[0], MaxFrame)
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return hdr[0], payload, nil
}

// FrameWriter writes whole frames to w; it is safe for concurrent use (one
// frame is never interleaved with another).
type FrameWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// NewFrameWriter returns a FrameWriter on w.
func NewFrameWriter(w io.Writer) *FrameWriter { return &FrameWriter{w: w} }

// WriteFrame writes payload as one frame on ch; over MaxFrame bytes is
// ErrFrameTooLarge and nothing is written.
func (fw *FrameWriter) WriteFrame(ch byte, payload []byte) error {
	if len(payload) > MaxFrame {
		return fmt.Errorf("%w: %d bytes on channel %d, limit %d", ErrFrameTooLarge, len(payload), ch, MaxFrame)
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	fw.buf = append(fw.buf[:0], ch, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(fw.buf[1:5], uint32(len(payload)))
	fw.buf = append(fw.buf, payload...)
	_, err := fw.w.Write(fw.buf)
	if cap(fw.buf) > 64<<10 {
		fw.buf = nil // do not keep a large buffer for a quiet session
	}
	return err
}

// Channel returns a writer that sends what is written to it on ch, in
// frames of at most MaxFrame bytes; an empty write sends nothing.
func (fw *FrameWriter) Channel(ch byte) io.Writer { return channelWriter{fw, ch} }

type channelWriter struct {
	fw *FrameWriter
	ch byte
}

func (c channelWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), MaxFrame)
		if err := c.fw.WriteFrame(c.ch, p[:n]); err != nil {
			return written, err
		}
		written += n
		p = p[n:]
	}
	return written, nil
}
