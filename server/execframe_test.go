package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"testing"
)

func TestExecFramesRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	fw := NewFrameWriter(&buf)
	frames := []struct {
		ch byte
		p  []byte
	}{
		{ChanStdin, []byte("hello")},
		{ChanStdin, nil}, // stdin closed
		{ChanResize, []byte(`{"width":80,"height":24}`)},
		{ChanStdout, bytes.Repeat([]byte{0xff}, MaxFrame)},
		{ChanStatus, []byte(`{"exitCode":3}`)},
	}
	for _, f := range frames {
		if err := fw.WriteFrame(f.ch, f.p); err != nil {
			t.Fatal(err)
		}
	}
	if got := buf.Bytes()[:10]; !bytes.Equal(got, []byte{0, 0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'}) {
		t.Fatalf("wire form of the first frame: % x", got)
	}
	for i, want := range frames {
		ch, p, err := ReadFrame(&buf)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if ch != want.ch || !bytes.Equal(p, want.p) {
			t.Fatalf("frame %d: channel %d, %d bytes; want channel %d, %d bytes", i, ch, len(p), want.ch, len(want.p))
		}
	}
	if _, _, err := ReadFrame(&buf); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
}

func TestExecFramesLimitsAndTruncation(t *testing.T) {
	var buf bytes.Buffer
	if err := NewFrameWriter(&buf).WriteFrame(ChanStdout, make([]byte, MaxFrame+1)); !errors.Is(err, ErrFrameTooLarge) || buf.Len() != 0 {
		t.Fatalf("oversized write: %v, %d bytes written", err, buf.Len())
	}
	hdr := []byte{ChanStdin, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(hdr[1:], MaxFrame+1)
	if _, _, err := ReadFrame(bytes.NewReader(hdr)); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("oversized header: %v", err)
	}
	binary.BigEndian.PutUint32(hdr[1:], 0xffffffff)
	if _, _, err := ReadFrame(bytes.NewReader(hdr)); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("4 GiB header: %v", err)
	}
	for _, in := range [][]byte{{ChanStdout, 0, 0}, {ChanStdout, 0, 0, 0, 4, 'a', 'b'}} {
		if _, _, err := ReadFrame(bytes.NewReader(in)); err != io.ErrUnexpectedEOF {
			t.Fatalf("truncated % x: %v, want io.ErrUnexpectedEOF", in, err)
		}
	}
}

func TestExecFramesChannelWriter(t *testing.T) {
	var buf bytes.Buffer
	fw := NewFrameWriter(&buf)
	data := bytes.Repeat([]byte("0123456789"), MaxFrame/4) // 2.5 MiB
	if n, err := fw.Channel(ChanStderr).Write(data); err != nil || n != len(data) {
		t.Fatalf("write %d bytes: %d, %v", len(data), n, err)
	}
	if n, err := fw.Channel(ChanStderr).Write(nil); err != nil || n != 0 {
		t.Fatalf("empty write: %d, %v", n, err)
	}
	var got []byte
	var sizes []int
	for {
		ch, p, err := ReadFrame(&buf)
		if err == io.EOF {
			break
		}
		if err != nil || ch != ChanStderr {
			t.Fatalf("channel %d, %v", ch, err)
		}
		sizes = append(sizes, len(p))
		got = append(got, p...)
	}
	if !bytes.Equal(got, data) || len(sizes) != 3 || sizes[0] != MaxFrame || sizes[2] != len(data)-2*MaxFrame {
		t.Fatalf("frames of sizes %v, %d bytes in all", sizes, len(got))
	}
}

func TestExecFramesConcurrentWritersDoNotInterleave(t *testing.T) {
	var buf bytes.Buffer
	fw := NewFrameWriter(&buf)
	var wg sync.WaitGroup
	for ch := byte(1); ch <= 2; ch++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := bytes.Repeat([]byte{ch}, 4096)
			for range 200 {
				if err := fw.WriteFrame(ch, p); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	count := map[byte]int{}
	for {
		ch, p, err := ReadFrame(&buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(p) != 4096 || bytes.Count(p, []byte{ch}) != 4096 {
			t.Fatalf("frame on channel %d holds foreign bytes", ch)
		}
		count[ch]++
	}
	if count[1] != 200 || count[2] != 200 {
		t.Fatalf("frames per channel: %v", count)
	}
}
