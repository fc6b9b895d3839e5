package server

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/berth-dev/berth/store"
)

// hostGet GETs url with the Host header host and token (none when "").
func hostGet(t *testing.T, url, host, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	return send(t, req, token)
}

// TestOpenServerRefusesForeignHosts: a server without admin tokens
// answers only requests addressed to a loopback name, so a web page whose
// name an attacker rebinds to 127.0.0.1 reads nothing through a browser;
// a server with admin tokens answers any name (its requests carry a token
// no page has).
func TestOpenServerRefusesForeignHosts(t *testing.T) {
	st, _ := store.New(nil)
	open := httptest.NewServer(New(Options{Store: st, Address: "127.0.0.1", PushTokens: []string{"push"}}))
	defer open.Close()
	_, port, _ := net.SplitHostPort(open.Listener.Addr().String())
	port = ":" + port
	for _, host := range []string{"evil.example", "evil.example" + port, "127.0.0.1.evil.example" + port, "localhost.evil.example", "10.0.0.1" + port, "[::2]" + port} {
		for _, path := range []string{"/pods", "/events", "/healthz", "/metrics"} {
			if code, b := hostGet(t, open.URL+path, host, ""); code != http.StatusForbidden || !strings.Contains(b, "server.token_file") {
				t.Errorf("Host %s, %s: %d %q, want 403 naming server.token_file", host, path, code, b)
			}
		}
		if code, _ := hostGet(t, open.URL+"/pods", host, "push"); code != http.StatusForbidden {
			t.Errorf("Host %s with a push token: %d, want 403", host, code)
		}
	}
	for _, host := range []string{"127.0.0.1" + port, "127.0.0.1", "localhost" + port, "LOCALHOST" + port, "[::1]" + port, "127.0.0.2" + port} {
		if code, b := hostGet(t, open.URL+"/pods", host, ""); code != http.StatusOK {
			t.Errorf("Host %s: %d %q, want 200", host, code, b)
		}
	}
	named := httptest.NewServer(New(Options{Store: st, Address: "localhost"}))
	defer named.Close()
	if code, b := hostGet(t, named.URL+"/pods", "localhost", ""); code != http.StatusOK {
		t.Errorf("server.address localhost, Host localhost: %d %q", code, b)
	}
	guarded := httptest.NewServer(New(Options{Store: st, Tokens: []string{"admin"}}))
	defer guarded.Close()
	if code, b := hostGet(t, guarded.URL+"/pods", "node1.example:10350", "admin"); code != http.StatusOK {
		t.Errorf("admin token, another name: %d %q, want 200", code, b)
	}
}
