package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/runtime/fake"

	"github.com/berth-dev/berth/metrics"
	"github.com/berth-dev/berth/sources"
	"github.com/berth-dev/berth/stats"
	"github.com/berth-dev/berth/store"
)

// fullAPI serves every route berth registers, with a token, on a real
// http.Server with the given limits.
func fullAPI(t *testing.T, l Limits) string {
	t.Helper()
	st, _ := store.New(nil)
	s := New(Options{Store: st, Registry: metrics.New().Registry, Tokens: []string{"tok"}, Events: store.EventRecorder{Store: st}.List})
	RegisterLogs(s, fake.New(nil))
	RegisterStats(s, stats.Unavailable{Reason: "test"})
	push := sources.NewPushSource("push", t.TempDir(), sources.Options{})
	RegisterPush(s, "push", push.Routes())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpServer(ln.Addr().String(), s, l)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func do(t *testing.T, method, url, token string, body io.Reader) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, body)
	return send(t, req, token)
}

// send sends req with token (none when "") and returns the answer's code
// and body.
func send(t *testing.T, req *http.Request, token string) (int, string) {
	t.Helper()
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestEveryEndpointWithAndWithoutToken(t *testing.T) {
	base := fullAPI(t, DefaultLimits)
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers: [{name: a, image: 'img:1'}]\n"
	for _, tc := range []struct {
		method, path, body string
		open               bool // answers without a token
		withToken          int
	}{
		{"GET", "/healthz", "", true, 200},
		{"GET", "/readyz", "", true, 200},
		{"GET", "/metrics", "", true, 200},
		{"GET", "/pods", "", false, 200},
		{"GET", "/pods/default/nope", "", false, 404},
		{"GET", "/events", "", false, 200},
		{"GET", "/containerLogs/default/nope/app", "", false, 404},
		{"GET", "/stats/summary", "", false, 503},
		{"GET", "/spec", "", false, 503},
		{"GET", "/metrics/cadvisor", "", false, 503},
		{"POST", "/pods/default/p", pod, false, 201},
		{"PUT", "/pods/default/p", pod, false, 200},
		{"DELETE", "/pods/default/p", "", false, 200},
	} {
		if !tc.open {
			if code, _ := do(t, tc.method, base+tc.path, "", strings.NewReader(tc.body)); code != 401 {
				t.Errorf("%s %s without token: %d, want 401", tc.method, tc.path, code)
			}
			if code, _ := do(t, tc.method, base+tc.path, "wrong", strings.NewReader(tc.body)); code != 401 {
				t.Errorf("%s %s with a wrong token: %d, want 401", tc.method, tc.path, code)
			}
		}
		if code, body := do(t, tc.method, base+tc.path, "tok", strings.NewReader(tc.body)); code != tc.withToken {
			t.Errorf("%s %s with token: %d %q, want %d", tc.method, tc.path, code, body, tc.withToken)
		}
	}
}

func TestOversizedAndMalformedRequests(t *testing.T) {
	base := fullAPI(t, DefaultLimits)
	huge := strings.NewReader(strings.Repeat("x", 3<<20))
	if code, _ := do(t, "POST", base+"/pods/default/big", "tok", huge); code != http.StatusRequestEntityTooLarge {
		t.Errorf("3 MiB body: %d, want 413", code)
	}
	if code, _ := do(t, "POST", base+"/pods/default/bad", "tok", strings.NewReader("\x00\x01{{{")); code != 400 {
		t.Errorf("garbage body: %d, want 400", code)
	}
	if code, _ := do(t, "POST", base+"/pods/default/..", "tok", strings.NewReader("")); code < 400 || code >= 500 {
		t.Errorf("dot-dot pod name: %d", code)
	}
	if code, _ := do(t, "GET", base+"/containerLogs/default/p/app?tailLines=abc", "tok", nil); code != 400 {
		t.Errorf("bad tailLines: %d, want 400", code)
	}
	// A header block beyond the limit is refused by the server itself.
	req, _ := http.NewRequest("GET", base+"/pods", nil)
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("X-Big", strings.Repeat("y", 200<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("200 KiB header: %d, want 431", resp.StatusCode)
	}
}

func TestSlowClientIsCutOff(t *testing.T) {
	base := fullAPI(t, Limits{ReadHeader: 300 * time.Millisecond, Read: time.Second, Idle: time.Second, HeaderBytes: 64 << 10})
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Half a request line, then nothing: a slowloris client.
	fmt.Fprint(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	_, err = bufio.NewReader(conn).ReadString('\n')
	if err == nil {
		// The server may answer 408 before closing; either way it must end.
		_, err = io.ReadAll(conn)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("server kept a slow client for %v", time.Since(start))
	}
	// Meanwhile other clients are served.
	if code, _ := do(t, "GET", base+"/healthz", "", nil); code != 200 {
		t.Fatalf("healthz %d", code)
	}
}
