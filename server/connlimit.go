package server

import (
	"net"
	"net/http"
	"sync"
)

// ConnLimit is a listener that serves at most max connections at once, so
// that API clients never take the file descriptors the rest of berth
// needs (the sources' files, the engine's and etcd's connections). At the
// cap a new connection closes the one idle the longest between two
// requests (keep-alive) to make room, as nginx reclaims idle keep-alive
// connections; with none idle it waits for one to close, and the next
// ones wait in the kernel's backlog.
//
// Set the http.Server's ConnState to the ConnLimit's: it learns which
// connections are idle from it.
type ConnLimit struct {
	net.Listener
	slots chan struct{} // one token per open connection
	done  chan struct{} // closed by Close
	close sync.Once
	idled chan struct{} // a connection became idle (capacity 1)

	mu   sync.Mutex
	seq  uint64
	idle map[net.Conn]uint64 // keep-alive connections between requests, with when they became idle
}

// LimitConnections returns ln capped at max open connections (max >= 1).
func LimitConnections(ln net.Listener, max int) *ConnLimit {
	return &ConnLimit{Listener: ln, slots: make(chan struct{}, max), done: make(chan struct{}), idled: make(chan struct{}, 1), idle: map[net.Conn]uint64{}}
}

// Accept returns the next connection once it has a slot: at the cap it
// closes the connection idle the longest (or the first to become idle)
// and waits for a slot to free, holding that one connection meanwhile;
// the next ones stay in the backlog.
func (l *ConnLimit) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for closing := false; ; {
		select {
		case l.slots <- struct{}{}:
			return &limitedConn{Conn: c, l: l}, nil
		default:
		}
		if !closing {
			closing = l.closeIdle()
		}
		select {
		case l.slots <- struct{}{}: // the idle one's, or any that closed first
			return &limitedConn{Conn: c, l: l}, nil
		case <-l.idled:
		case <-l.done:
			_ = c.Close()
			return nil, net.ErrClosed
		}
	}
}

// Close closes the listener and ends an Accept waiting for a slot.
func (l *ConnLimit) Close() error {
	l.close.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// ConnState records which connections are idle; it is the http.Server's
// ConnState hook.
func (l *ConnLimit) ConnState(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s == http.StateIdle {
		l.seq++
		l.idle[c] = l.seq
		select {
		case l.idled <- struct{}{}:
		default:
		}
		return
	}
	delete(l.idle, c)
}

// closeIdle starts closing the connection idle the longest, if any (in
// the background: a TLS close may wait on a client that does not read)
// and reports whether it did.
func (l *ConnLimit) closeIdle() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	var oldest net.Conn
	for c, at := range l.idle {
		if oldest == nil || at < l.idle[oldest] {
			oldest = c
		}
	}
	if oldest == nil {
		return false
	}
	delete(l.idle, oldest)
	go oldest.Close()
	return true
}

// limitedConn gives its slot back once, when closed.
type limitedConn struct {
	net.Conn
	l    *ConnLimit
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { <-c.l.slots })
	return err
}
