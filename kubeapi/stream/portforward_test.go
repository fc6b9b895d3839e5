package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	//lint:ignore SA1019 client-go's SPDY dialers return this type
	"k8s.io/apimachinery/pkg/util/httpstream"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/portforward"

	"github.com/berth-dev/berth/internal/testutil/kubestream"
)

// dialers are the ways kubectl 1.37 can reach pods/portforward of pod.
func (f *streamFixture) dialers(t *testing.T, pod string) map[string]httpstream.Dialer {
	t.Helper()
	u, _ := url.Parse(f.srv.URL + "/api/v1/namespaces/default/pods/" + pod + "/portforward")
	return kubestream.Dialers(t, f.cfg, u)
}

func TestPortForward(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.URL.Path)
	}))
	defer web.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(web.URL, "http://"))
	var remote int
	fmt.Sscan(port, &remote)
	f := newStreamFixture(t, nil)
	f.pod(t, "web", "127.0.0.1", nil, "app")
	// A hostNetwork pod is reached on the host's loopback, whatever its IP.
	p := f.pod(t, "host", "192.0.2.1", nil, "app")
	cp := *p
	cp.Spec = p.Spec.DeepCopy()
	cp.Spec.Spec.HostNetwork = true
	if err := f.st.UpsertPod(&cp); err != nil {
		t.Fatal(err)
	}
	dialers := f.dialers(t, "web")
	for name, d := range f.dialers(t, "host") {
		dialers["hostNetwork "+name] = d
	}
	for name, d := range dialers {
		local, _, _ := kubestream.Forward(t, d, remote)
		for i := range 3 {
			// A new connection each time: no keep-alive.
			c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/%d", local, i))
			if err != nil {
				t.Fatalf("%s: request %d: %v", name, i, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != fmt.Sprintf("hello /%d", i) {
				t.Errorf("%s: request %d: %q", name, i, b)
			}
		}
	}
}

// A port nothing listens on: the kubelet's error goes to the error stream,
// which client-go reports and then ends the forward.
func TestPortForwardRefusedPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	remote := l.Addr().(*net.TCPAddr).Port
	l.Close()
	reported := make(chan string, 16)
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = append(utilruntime.ErrorHandlers, func(_ context.Context, err error, msg string, _ ...interface{}) {
		reported <- msg + ": " + err.Error()
	})
	t.Cleanup(func() { utilruntime.ErrorHandlers = saved })
	f := newStreamFixture(t, nil)
	f.pod(t, "web", "127.0.0.1", nil, "app")
	want := fmt.Sprintf("An error occurred forwarding: error forwarding port %d to pod web, uid uid-web: dial tcp 127.0.0.1:%d: connect: connection refused", remote, remote)
	for name, d := range f.dialers(t, "web") {
		local, _, done := kubestream.Forward(t, d, remote)
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", local))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
		b, _ := io.ReadAll(c)
		c.Close()
		if len(b) != 0 {
			t.Errorf("%s: read %q from a refused port", name, b)
		}
		select {
		case err := <-done:
			if !errors.Is(err, portforward.ErrLostConnectionToPod) {
				t.Errorf("%s: forward ended with %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s: the forward did not see the error stream's message", name)
		}
		if got := <-reported; got != want {
			t.Errorf("%s: client reported %q, want %q", name, got, want)
		}
	}
}

func TestPortForwardRefusals(t *testing.T) {
	f := newStreamFixture(t, nil)
	f.pod(t, "noip", "", nil, "app")
	for pod, want := range map[string]string{"nosuch": `pods "nosuch" not found`, "noip": "pod noip has no IP yet"} {
		for name, d := range f.dialers(t, pod) {
			_, _, err := d.Dial(portforward.PortForwardProtocolV1Name)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s %s: %v, want %q", name, pod, err, want)
			}
		}
	}
}

// Each forwarded connection dials the pod's sandbox's IP as stored then:
// a pod that got a new sandbox is reached at its address.
func TestPortForwardFollowsPodIP(t *testing.T) {
	l2, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2: %v", err)
	}
	port := l2.Addr().(*net.TCPAddr).Port
	l1, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		l2.Close()
		t.Skipf("port %d taken on 127.0.0.1: %v", port, err)
	}
	for l, body := range map[net.Listener]string{l1: "first", l2: "second"} {
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, body) })}
		go srv.Serve(l)
		t.Cleanup(func() { srv.Close() })
	}
	f := newStreamFixture(t, nil)
	p := f.pod(t, "web", "127.0.0.1", nil, "app")
	local, _, _ := kubestream.Forward(t, f.dialers(t, "web")["tunnel"], port)
	get := func() string {
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
		resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/", local))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := get(); got != "first" {
		t.Fatalf("before the new IP: %q", got)
	}
	// The sandbox is re-created with a new address.
	f.sandbox(t, p, "sandbox-web", "127.0.0.1", false)
	f.sandbox(t, p, "sandbox-web-2", "127.0.0.2", true)
	if got := get(); got != "second" {
		t.Errorf("after the new IP: %q", got)
	}
}
