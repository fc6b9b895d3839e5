package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// waitFile serves GET /wait?path=P&want=V: it answers "watching" at once
// (flushed), then "seen" as soon as the file at P holds exactly V, or
// "timeout" after 30 s. It sleeps on inotify events of P's directory (a
// projected volume's ..data swap is a rename there), so it costs no CPU
// while it waits and sees a change within the kernel's wake-up.
func waitFile(w http.ResponseWriter, r *http.Request) {
	path, want := r.URL.Query().Get("path"), []byte(r.URL.Query().Get("want"))
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, filepath.Dir(path),
		unix.IN_MOVED_TO|unix.IN_CREATE|unix.IN_CLOSE_WRITE|unix.IN_MODIFY|unix.IN_DELETE); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	fmt.Fprintln(w, "watching")
	w.(http.Flusher).Flush()
	deadline := time.Now().Add(30 * time.Second)
	buf := make([]byte, 64<<10)
	for {
		if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, want) {
			fmt.Fprintln(w, "seen")
			return
		}
		left := time.Until(deadline)
		if left <= 0 || r.Context().Err() != nil {
			fmt.Fprintln(w, "timeout")
			return
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, int(min(left, time.Second).Milliseconds())+1); err != nil && err != unix.EINTR {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		for {
			if n, err := unix.Read(fd, buf); n <= 0 || err != nil {
				break
			}
		}
	}
}
