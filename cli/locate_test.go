package cli

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// isolate clears the variables the client commands and the agent's
// configuration read, and points the default config file at nothing.
func isolate(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "BERTH_") || k == "KUBECONFIG" {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	old := defaultConfigFile
	defaultConfigFile = filepath.Join(t.TempDir(), "absent.yaml")
	t.Cleanup(func() { defaultConfigFile = old })
}

// agentConfig writes an agent configuration file for node listening at
// rawURL's host and port, with tokenFile (may be "") and extra YAML lines.
func agentConfig(t *testing.T, node, rawURL, tokenFile string, extra ...string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	y := fmt.Sprintf("node_name: %s\nserver:\n  address: %s\n  port: %s\n", node, u.Hostname(), u.Port())
	if tokenFile != "" {
		y += "  token_file: " + tokenFile + "\n"
	}
	y += strings.Join(extra, "\n")
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestClientFindsBerthWithoutFlags(t *testing.T) {
	isolate(t)
	a := newCLIAPI(t)
	a.addPod(t, "default", "web", "app")
	cfg := agentConfig(t, "n1", a.url, a.tokenFile)
	closed := closedURL(t)
	listsWeb := func(what string, env map[string]string, args ...string) {
		t.Helper()
		for k, v := range env {
			t.Setenv(k, v)
		}
		out, _, err := runCLI(t, append([]string{"get", "pods"}, args...)...)
		if err != nil || !strings.Contains(out, "web") {
			t.Errorf("%s: get pods: %v\n%s", what, err, out)
		}
		for k := range env {
			os.Unsetenv(k)
		}
	}
	listsWeb("--config", nil, "--config", cfg)
	listsWeb("BERTH_CONFIG", map[string]string{envConfig: cfg})
	listsWeb("BERTH_SERVER and BERTH_TOKEN_FILE", map[string]string{envServer: a.url, envTokenFile: a.tokenFile})
	listsWeb("flags over the environment", map[string]string{envServer: closed, envTokenFile: "/nonexistent"},
		"--server", a.url, "--token-file", a.tokenFile)
	listsWeb("BERTH_SERVER over the config, the config's token for its own address", map[string]string{envServer: a.url, envConfig: cfg})

	defaultConfigFile = cfg
	listsWeb("the default config file", nil)
	// The agent reads BERTH_ variables over its file; so does the client.
	u, _ := url.Parse(a.url)
	defaultConfigFile = agentConfig(t, "n1", closed, a.tokenFile)
	listsWeb("BERTH_SERVER_PORT over the file", map[string]string{"BERTH_SERVER_PORT": u.Port()})
}

func TestUnauthorizedNamesTheWayToAToken(t *testing.T) {
	isolate(t)
	a := newCLIAPI(t)
	_, _, err := runCLI(t, "get", "pods", "--server", a.url)
	for _, want := range []string{"the server at " + a.url + " wants a token", "401", "--token-file FILE", "BERTH_TOKEN_FILE=FILE", "--config FILE", "BERTH_CONFIG"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("no token: %v, want %q in it", err, want)
		}
	}
	wrong := filepath.Join(t.TempDir(), "wrong")
	_ = os.WriteFile(wrong, []byte("nope\n"), 0o600)
	t.Setenv(envTokenFile, wrong)
	_, _, err = runCLI(t, "logs", "web", "--server", a.url)
	if want := "refused the token in " + wrong + " (from BERTH_TOKEN_FILE)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("wrong token: %v, want %q in it", err, want)
	}
	os.Unsetenv(envTokenFile)

	// The agent's token is not sent to another server.
	other := agentConfig(t, "n1", closedURL(t), a.tokenFile)
	_, _, err = runCLI(t, "get", "pods", "--server", a.url, "--config", other)
	if err == nil || !strings.Contains(err.Error(), "wants a token") {
		t.Errorf("config's token sent to --server: %v", err)
	}
}

func TestConfigErrorsNameTheFile(t *testing.T) {
	isolate(t)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	_ = os.WriteFile(bad, []byte("server:\n  port: 99999\n"), 0o644)
	_, _, err := runCLI(t, "get", "pods", "--config", bad)
	if err == nil || !strings.Contains(err.Error(), "server.port") || !strings.Contains(err.Error(), "--server") {
		t.Errorf("bad config: %v", err)
	}
	_, _, err = runCLI(t, "get", "pods", "--config", "/nonexistent/config.yaml")
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/config.yaml") {
		t.Errorf("missing config: %v", err)
	}
}

func TestConfigURL(t *testing.T) {
	for _, tc := range []struct {
		addr string
		tls  bool
		want string
	}{
		{"127.0.0.1", false, "http://127.0.0.1:10350"},
		{"0.0.0.0", false, "http://127.0.0.1:10350"},
		{"::", true, "https://[::1]:10350"},
		{"", false, "http://127.0.0.1:10350"},
		{"localhost", true, "https://localhost:10350"},
		{"10.0.0.5", false, "http://10.0.0.5:10350"},
	} {
		if got := configURL(tc.addr, 10350, tc.tls); got != tc.want {
			t.Errorf("configURL(%q, tls %t) = %s, want %s", tc.addr, tc.tls, got, tc.want)
		}
	}
}

func TestUnreachableNamesWhereTheURLCameFrom(t *testing.T) {
	isolate(t)
	closed := closedURL(t)
	defaultConfigFile = agentConfig(t, "n1", closed, "")
	_, _, err := runCLI(t, "get", "pods")
	if want := "cannot reach berth at " + closed + " (from server.address and server.port of the agent's configuration " + defaultConfigFile + "): "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("from the config: %v, want %q...", err, want)
	}
	t.Setenv(envServer, closed)
	_, _, err = runCLI(t, "logs", "web")
	if want := "cannot reach berth at " + closed + " (from BERTH_SERVER): "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("from BERTH_SERVER: %v, want %q...", err, want)
	}
}
