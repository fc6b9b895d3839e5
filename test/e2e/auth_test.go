package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// writeToken writes a fresh token to a 0600 file named name and returns
// the file and the token.
func writeToken(tb testing.TB, name string) (file, token string) {
	tb.Helper()
	token = name + "-" + randHex(8)
	file = filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	return file, token
}

// authDo sends method url with body and a bearer token (none if empty).
func authDo(tb testing.TB, method, url, token, body string) (int, string) {
	tb.Helper()
	code, text, err := tokenDo(method, url, token, "", body)
	if err != nil {
		tb.Fatal(err)
	}
	return code, text
}

// tokenDo sends method url with a bearer token (none when "") and a body
// of type ctype (none when ""), as curl would, within 10 s.
func tokenDo(method, url, token, ctype, body string) (int, string, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// startWithPush starts berth with an admin token file and the push source
// on with a push token file (plus env), and returns it with both tokens.
func startWithPush(t *testing.T, env ...string) (b *Berth, admin, push string) {
	t.Helper()
	adminFile, admin := writeToken(t, "admin")
	pushFile, push := writeToken(t, "push")
	b = startBerth(t, Options{Env: append([]string{"BERTH_SERVER_TOKEN_FILE=" + adminFile,
		"BERTH_SOURCES_PUSH_ENABLED=true", "BERTH_SOURCES_PUSH_TOKEN_FILE=" + pushFile}, env...)})
	return b, admin, push
}

// TestPushTokenScope: a push client's token pushes and reads its own pods,
// and nothing else: not the file pods in GET /pods, not their logs, not
// exec. The admin token still opens everything.
func TestPushTokenScope(t *testing.T) {
	adminFile, admin := writeToken(t, "admin")
	pushFile, push := writeToken(t, "push")
	b := startBerth(t, Options{Env: []string{"BERTH_SERVER_TOKEN_FILE=" + adminFile,
		"BERTH_SOURCES_PUSH_ENABLED=true", "BERTH_SOURCES_PUSH_TOKEN_FILE=" + pushFile}})
	writeFile(t, b.Pods, "trusted.yaml", podYAML("trusted", Ctr{Name: "main", Args: []string{"sleep"}, Env: [][2]string{{"WHO", "trusted"}}}))
	if code, body := authDo(t, "POST", b.URL("/pods/default/pushed"), push, sleeper("pushed")); code != http.StatusCreated {
		t.Fatalf("push with the push token: %d %s", code, body)
	}
	waitPodRunning(t, b.Node, "trusted", "main")
	waitPodRunning(t, b.Node, "pushed", "app")
	waitFor(t, waitLong, "berth reports trusted/main running", func() (bool, string) {
		code, body := authDo(t, "GET", b.URL("/pods/default/trusted"), admin, "")
		var p v1.Pod
		_ = json.Unmarshal([]byte(body), &p)
		return code == 200 && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil, body
	})

	names := func(token string) string {
		code, body := authDo(t, "GET", b.URL("/pods"), token, "")
		var list v1.PodList
		if err := json.Unmarshal([]byte(body), &list); code != 200 || err != nil {
			t.Fatalf("GET /pods: %d %v", code, err)
		}
		var n []string
		for _, p := range list.Items {
			n = append(n, p.Name)
		}
		sort.Strings(n)
		return strings.Join(n, ",")
	}
	if got := names(push); got != "pushed" {
		t.Errorf("GET /pods with the push token: %s, want only pushed", got)
	}
	if got := names(admin); got != "pushed,trusted" {
		t.Errorf("GET /pods with the admin token: %s", got)
	}
	if code, _ := authDo(t, "GET", b.URL("/pods/default/trusted"), push, ""); code != http.StatusNotFound {
		t.Errorf("GET the file pod with the push token: %d, want 404", code)
	}
	if code, body := authDo(t, "GET", b.URL("/containerLogs/default/trusted/main"), push, ""); code != http.StatusForbidden {
		t.Errorf("logs of the file pod with the push token: %d %q, want 403", code, body)
	}
	if r := berthExec(t, b, pushFile, nil, "trusted", "-c", "main", "--", "/testapp", "getenv", "WHO"); r.code != 1 ||
		!strings.Contains(r.stderr, "Error from server (Forbidden)") || !strings.Contains(r.stderr, "sources.push.token_file") || r.stdout != "" {
		t.Errorf("exec in the file pod with the push token: %+v", r)
	}

	if r := berthExec(t, b, adminFile, nil, "trusted", "-c", "main", "--", "/testapp", "getenv", "WHO"); r != (execRun{"trusted\n", "", 0}) {
		t.Errorf("exec with the admin token: %+v", r)
	}
	if code, _ := authDo(t, "GET", b.URL("/containerLogs/default/trusted/main"), admin, ""); code != 200 {
		t.Errorf("logs with the admin token: %d", code)
	}
	if code, _ := authDo(t, "DELETE", b.URL("/pods/default/pushed"), "", ""); code != http.StatusUnauthorized {
		t.Errorf("anonymous delete: %d, want 401", code)
	}
	if code, body := authDo(t, "DELETE", b.URL("/pods/default/pushed"), push, ""); code != 200 {
		t.Errorf("delete with the push token: %d %s", code, body)
	}
	waitPodGone(t, b.Node, "pushed")
}

// TestStartRefusesInsecureSetups: `berth run` exits non-zero, naming the
// key, with an anonymous push source, a token file others can read, or an
// etcd password over plain http.
func TestStartRefusesInsecureSetups(t *testing.T) {
	need(t)
	tokenFile, _ := writeToken(t, "token")
	if err := os.Chmod(tokenFile, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		env  []string
		want string
	}{
		"anonymous push": {[]string{"BERTH_SOURCES_PUSH_ENABLED=true"}, "sources.push.token_file"},
		"readable token": {[]string{"BERTH_SERVER_TOKEN_FILE=" + tokenFile}, "server.token_file: " + tokenFile + " has mode 0644"},
		"readable push token": {[]string{"BERTH_SOURCES_PUSH_ENABLED=true", "BERTH_SOURCES_PUSH_TOKEN_FILE=" + tokenFile},
			"sources.push.token_file: " + tokenFile + " has mode 0644"},
		"etcd password over http": {[]string{"BERTH_SOURCES_ETCD_ENDPOINTS=http://127.0.0.1:1", "BERTH_SOURCES_ETCD_USERNAME=berth",
			"BERTH_SOURCES_ETCD_PASSWORD=s3cret"}, "sources.etcd.allow_insecure_auth"},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, berthBin, "run")
			cmd.Env = append(berthlessEnv(), "BERTH_ROOT_DIR="+t.TempDir(), "BERTH_SOURCES_FILE_PATH="+t.TempDir(),
				"BERTH_NODE_NAME=e2e-"+runID+"-refused", "BERTH_SERVER_PORT="+strconv.Itoa(freePort(t)), "BERTH_CADVISOR_ENABLED=false")
			cmd.Env = append(cmd.Env, tc.env...)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if ctx.Err() != nil || !errors.As(err, &ee) || !strings.Contains(string(out), tc.want) {
				t.Fatalf("berth run: %v (%v), want a non-zero exit naming %q; output:\n%s", err, ctx.Err(), tc.want, out)
			}
		})
	}
}
