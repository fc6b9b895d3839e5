// Package kubestream gives tests the ways kubectl 1.37 reaches a pod's
// streams, so the API's own tests and the end-to-end tests try the same
// three. It is apart from testutil to keep client-go's stream clients out of
// every test binary that only needs a free port.
package kubestream

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"testing"

	//lint:ignore SA1019 client-go's SPDY dialers return this type
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
)

// fallBack is kubectl's rule for leaving WebSocket for SPDY.
func fallBack(err error) bool {
	return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
}

// Executors reach pods/exec or pods/attach at u: over WebSocket, over
// SPDY, and the first falling back to the second, keyed by those names.
func Executors(tb testing.TB, cfg *rest.Config, u *url.URL) map[string]remotecommand.Executor {
	tb.Helper()
	ws, err := remotecommand.NewWebSocketExecutor(cfg, "GET", u.String())
	if err != nil {
		tb.Fatal(err)
	}
	sp, err := remotecommand.NewSPDYExecutor(cfg, "POST", u)
	if err != nil {
		tb.Fatal(err)
	}
	fb, err := remotecommand.NewFallbackExecutor(ws, sp, fallBack)
	if err != nil {
		tb.Fatal(err)
	}
	return map[string]remotecommand.Executor{"websocket": ws, "spdy": sp, "fallback": fb}
}

// Dialers reach pods/portforward at u: SPDY tunneled in WebSocket, plain
// SPDY, and the first falling back to the second.
func Dialers(tb testing.TB, cfg *rest.Config, u *url.URL) map[string]httpstream.Dialer {
	tb.Helper()
	tr, up, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	sp := spdy.NewDialer(up, &http.Client{Transport: tr}, "POST", u)
	ws, err := portforward.NewSPDYOverWebsocketDialer(u, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	fb := portforward.NewFallbackDialer(ws, sp, fallBack)
	return map[string]httpstream.Dialer{"tunnel": ws, "spdy": sp, "fallback": fb}
}

// Forward starts forwarding a free loopback port to the pod's port remote
// through d, as kubectl port-forward does, and returns that local port.
// stop ends the forward; it may be called more than once and is called
// when the test ends. done carries what ForwardPorts returned.
func Forward(tb testing.TB, d httpstream.Dialer, remote int) (local int, stop func(), done <-chan error) {
	tb.Helper()
	stopCh, ready := make(chan struct{}), make(chan struct{})
	var once sync.Once
	stop = func() { once.Do(func() { close(stopCh) }) }
	tb.Cleanup(stop)
	pf, err := portforward.NewOnAddresses(d, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", remote)}, stopCh, ready, io.Discard, io.Discard)
	if err != nil {
		tb.Fatal(err)
	}
	result := make(chan error, 1)
	go func() { result <- pf.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-result:
		tb.Fatalf("forward: %v", err)
	}
	ports, err := pf.GetPorts()
	if err != nil {
		tb.Fatal(err)
	}
	return int(ports[0].Local), stop, result
}
