package stream

import (
	"bufio"
	"net"
	"net/http"
	"time"
)

// hijackWriter hands over the connection without the server's read and
// write deadlines: an upgraded stream outlives the request's timeouts.
type hijackWriter struct{ http.ResponseWriter }

func (h hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err == nil {
		_ = c.SetDeadline(time.Time{})
	}
	return c, brw, err
}

func (h hijackWriter) Unwrap() http.ResponseWriter { return h.ResponseWriter }
