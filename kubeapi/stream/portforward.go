package stream

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	gwebsocket "github.com/gorilla/websocket"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	pfconsts "k8s.io/apimachinery/pkg/util/portforward"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
	"k8s.io/streaming/pkg/httpstream/wsstream"

	"github.com/berth-dev/berth/kubeapi/apierr"
	"github.com/berth-dev/berth/model"
)

// servePortForward answers pods/{name}/portforward: SPDY/3.1 with the
// portforward.k8s.io protocol, plain or tunneled in WebSocket binary frames
// (SPDY/3.1+portforward.k8s.io, what kubectl 1.37 tries first). Each
// forwarded connection is a data and an error stream of one requestID
// whose "port" header is the pod's port, reached by dialing the IP of the
// pod's own running sandbox (127.0.0.1 for hostNetwork pods) from berth.
func (s *streams) servePortForward(w http.ResponseWriter, r *http.Request) {
	p, err := s.pod(r)
	if err != nil {
		apierr.WriteError(w, err)
		return
	}
	if _, err := s.podHost(p); err != nil {
		apierr.WriteError(w, err)
		return
	}
	f := &forwarder{s: s, key: p.Key, pod: p.Spec.Name, uid: string(p.Spec.UID), source: p.Source}
	switch {
	case wsstream.IsWebSocketRequestWithTunnelingProtocol(r):
		up := gwebsocket.Upgrader{
			Subprotocols: []string{pfconsts.WebsocketsSPDYTunnelingPortForwardV1},
			// The route needs an admin bearer token, which a browser's
			// cross-site WebSocket cannot send.
			CheckOrigin: func(*http.Request) bool { return true },
		}
		ws, err := up.Upgrade(hijackWriter{w}, r, nil)
		if err != nil {
			return // Upgrade answered the client
		}
		conn, err := spdy.NewServerConnection(portforward.NewTunnelingConnection("server", ws), f.received)
		if err != nil {
			_ = ws.Close()
			return
		}
		f.run(conn)
	case httpstream.IsUpgradeRequest(r):
		if _, err := httpstream.Handshake(r, w, []string{pfconsts.PortForwardV1Name}); err != nil {
			return
		}
		conn := spdy.NewResponseUpgrader().UpgradeResponse(hijackWriter{w}, r, f.received)
		if conn == nil {
			return
		}
		f.run(conn)
	default:
		apierr.WriteError(w, apierrors.NewBadRequest("Upgrade request required"))
	}
}

// podHost is the address berth dials to reach p's ports: that of the
// running sandbox of p's own incarnation (the loopback for a hostNetwork
// pod), never one a removed pod left running under p's key; the pod's
// status is not trusted for it.
func (s *streams) podHost(p *model.Pod) (string, error) {
	if p.Status.Phase != v1.PodRunning && p.Status.Phase != v1.PodPending {
		return "", apierrors.NewBadRequest(fmt.Sprintf("pod %s is not running (%s)", p.Spec.Name, p.Status.Phase))
	}
	ctrs, err := s.podContainers(p)
	if err != nil {
		return "", err
	}
	for _, c := range ctrs {
		switch {
		case c.Name != model.SandboxName || !c.Running():
		case p.Spec.Spec.HostNetwork:
			return "127.0.0.1", nil
		case c.IP != "":
			return c.IP, nil
		}
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("pod %s has no IP yet", p.Spec.Name))
}

// forwarder pairs the streams of one port-forward connection and forwards
// each complete pair.
type forwarder struct {
	s                     *streams
	key, pod, uid, source string
	mu                    sync.Mutex
	pairs                 map[string]*streamPair
}

// streamPair is the data and error stream of one requestID.
type streamPair struct {
	data, err httpstream.Stream
	started   bool
}

// received accepts a new stream when its headers are valid (the kubelet's
// checks); the pair forwards once both streams are in.
func (f *forwarder) received(st httpstream.Stream, _ <-chan struct{}) error {
	h := st.Headers()
	port, err := strconv.ParseUint(h.Get(v1.PortHeader), 10, 16)
	if err != nil || port == 0 {
		return fmt.Errorf("%q header: %q is not a port", v1.PortHeader, h.Get(v1.PortHeader))
	}
	typ := h.Get(v1.StreamType)
	if typ != v1.StreamTypeData && typ != v1.StreamTypeError {
		return fmt.Errorf("invalid stream type %q", typ)
	}
	id := h.Get(v1.PortForwardRequestIDHeader)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pairs == nil {
		f.pairs = map[string]*streamPair{}
	}
	pr := f.pairs[id]
	if pr == nil {
		pr = &streamPair{}
		f.pairs[id] = pr
	}
	if typ == v1.StreamTypeData {
		if pr.data != nil {
			return fmt.Errorf("request %s: data stream already open", id)
		}
		pr.data = st
	} else {
		if pr.err != nil {
			return fmt.Errorf("request %s: error stream already open", id)
		}
		pr.err = st
	}
	if pr.data != nil && pr.err != nil && !pr.started {
		pr.started = true
		go f.forward(id, pr, int(port))
	}
	return nil
}

// run serves conn until the client closes it.
func (f *forwarder) run(conn httpstream.Connection) {
	conn.SetIdleTimeout(streamIdleTimeout)
	<-conn.CloseChan()
}

// forward copies between the pair's data stream and a new connection to
// the pod's port; a failure to connect is written to the error stream, as
// the kubelet does.
func (f *forwarder) forward(id string, pr *streamPair, port int) {
	defer func() {
		_ = pr.err.Close()
		_ = pr.data.Close()
		f.mu.Lock()
		delete(f.pairs, id)
		f.mu.Unlock()
	}()
	c, err := f.dial(port)
	if err != nil {
		fmt.Fprintf(pr.err, "error forwarding port %d to pod %s, uid %v: %v", port, f.pod, f.uid, err)
		return
	}
	defer c.Close()
	toPod := make(chan struct{})
	go func() {
		defer close(toPod)
		_, err := io.Copy(c, pr.data)
		if tc, ok := c.(interface{ CloseWrite() error }); ok && err == nil {
			_ = tc.CloseWrite()
		} else {
			_ = c.Close()
		}
	}()
	_, _ = io.Copy(pr.data, c)
	_ = pr.data.Close()
	<-toPod
}

// dial connects to port of the pod as the store has it now: a restarted
// pod's new IP is used by the next connection of the same forward; a pod
// of another UID or source under the key is not reached.
func (f *forwarder) dial(port int) (net.Conn, error) {
	p, err := f.s.o.Store.Pod(nil, f.key)
	if err != nil {
		return nil, err
	}
	if p == nil || p.Spec == nil || string(p.Spec.UID) != f.uid || p.Source != f.source {
		return nil, fmt.Errorf("pod %s is gone", f.key)
	}
	host, err := f.s.podHost(p)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return f.s.dial(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
}
