package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// cliEnv is a berth with a token file, driven through the berth binary's
// operator commands.
type cliEnv struct {
	b         *Berth
	tokenFile string
}

func startCLIEnv(t *testing.T) *cliEnv {
	t.Helper()
	b, tokenFile := startBerthWithToken(t)
	return &cliEnv{b: b, tokenFile: tokenFile}
}

// args appends the client flags that reach e's berth.
func (e *cliEnv) args(args ...string) []string {
	return append(args, "--server", e.b.URL(""), "--token-file", e.tokenFile)
}

// berthCLI runs the berth binary to completion (30 s at most).
func berthCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, berthBin, args...)
	cmd.Env = berthlessEnv()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// startCLIStream starts a berth client command left running (get -w,
// logs -f); Ctrl-C must end it with exit 0.
func startCLIStream(t *testing.T, args ...string) *lineStream {
	t.Helper()
	cmd := exec.Command(berthBin, args...)
	cmd.Env = berthlessEnv()
	s := startLineStream(t, "berth", cmd)
	s.cleanExit = true
	return s
}

func TestCLI(t *testing.T) {
	e := startCLIEnv(t)
	writeFile(t, e.b.Pods, "cli.yaml", podYAML("cli",
		Ctr{Name: "web", Env: [][2]string{{"PORT", "8080"}}},
		Ctr{Name: "side", Args: []string{"sleep"}},
	))
	writeFile(t, e.b.Pods, "crash.yaml", podYAML("crash", Ctr{Name: "app", Args: []string{"exit", "1", "1s"}}))
	ids := waitPodRunning(t, e.b.Node, "cli", "web", "side")

	var desc string
	waitFor(t, waitLong, "berth describe pod cli: Running, web running, Started event", func() (bool, string) {
		out, errOut, err := berthCLI(t, e.args("describe", "pod", "cli")...)
		desc = out
		return err == nil && regexp.MustCompile(`(?m)^Status: +Running$`).MatchString(out) &&
				regexp.MustCompile(`(?m)^  web:\n    Container ID: +docker://`+ids["web"]+`$`).MatchString(out) &&
				regexp.MustCompile(`(?m)^  Normal +Started +\S+ +berth +Started container web$`).MatchString(out),
			fmt.Sprintf("%v %s\n%s", err, errOut, out)
	})
	for _, want := range []string{
		`(?m)^Name: +cli$`, `(?m)^Namespace: +default$`, `(?m)^Source: +file$`,
		`(?m)^Origin: +` + regexp.QuoteMeta(filepath.Join(e.b.Pods, "cli.yaml")) + `$`,
		`(?m)^    Image: +berth/testapp:1$`, `(?m)^    State: +Running$`, `(?m)^    Ready: +True$`,
		`(?m)^      PORT: +8080$`, `(?m)^  side:$`, `(?m)^Events:$`,
	} {
		if !regexp.MustCompile(want).MatchString(desc) {
			t.Errorf("describe lacks %s:\n%s", want, desc)
		}
	}
	if out, _, err := berthCLI(t, e.args("describe", "cli")...); err != nil || !strings.Contains(out, "Name:") {
		t.Errorf("berth describe cli: %v\n%s", err, out)
	}

	t.Run("logs", func(t *testing.T) {
		out, errOut, err := berthCLI(t, e.args("logs", "cli", "-c", "web")...)
		if err != nil || !strings.Contains(out, "testapp serve starting\n") {
			t.Fatalf("berth logs cli -c web: %v %q %q", err, out, errOut)
		}
		out, errOut, err = berthCLI(t, e.args("logs", "cli")...)
		if err != nil || !strings.Contains(out, "testapp serve starting\n") ||
			strings.TrimSpace(errOut) != `Defaulted container "web" out of: web, side` {
			t.Fatalf("berth logs cli: %v %q %q", err, out, errOut)
		}
		out, _, err = berthCLI(t, e.args("logs", "cli", "-c", "side", "--tail", "1", "--timestamps")...)
		if err != nil || !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\S+ testapp sleep (starting|stderr)\n$`).MatchString(out) {
			t.Fatalf("berth logs --tail 1 --timestamps: %v %q", err, out)
		}
	})

	t.Run("logs -f", func(t *testing.T) {
		s := startCLIStream(t, e.args("logs", "cli", "-c", "web", "-f")...)
		s.waitLine(t, "the start banner", func(l string) bool { return l == "testapp serve starting" })
		// A line the container writes now: testapp touch appends a
		// timestamp to the container's own stdout.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if code, out, err := dk.Exec(ctx, ids["web"], []string{"/testapp", "touch", "/proc/1/fd/1"}); err != nil || code != 0 {
			t.Fatalf("exec touch /proc/1/fd/1: %d %v %s", code, err, out)
		}
		s.waitLine(t, "the line written after -f started", func(l string) bool {
			_, err := time.Parse(time.RFC3339Nano, l)
			return err == nil
		})
		s.interrupt(t)
	})

	t.Run("logs --previous", func(t *testing.T) {
		waitFor(t, waitLong, "crash restarted", func() (bool, string) {
			out, errOut, err := berthCLI(t, e.args("logs", "crash", "--previous")...)
			return err == nil && strings.Contains(out, "testapp exit starting\n"), fmt.Sprintf("%v %q %q", err, out, errOut)
		})
	})

	t.Run("completion", func(t *testing.T) {
		out, _, err := berthCLI(t, "completion", "bash")
		if err != nil || !strings.Contains(out, "__start_berth") {
			t.Fatalf("berth completion bash: %v (%d bytes)", err, len(out))
		}
		out, _, err = berthCLI(t, append(e.args("__complete", "logs"), "")...) // the word to complete is last
		if err != nil || !strings.HasPrefix(out, "cli\ncrash\n:") {
			t.Fatalf("berth __complete logs: %v %q", err, out)
		}
	})

	t.Run("unreachable", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String()
		ln.Close()
		for _, args := range [][]string{{"logs", "cli"}, {"describe", "pod", "cli"}, {"get", "pods", "-w"}} {
			_, errOut, err := berthCLI(t, append(args, "--server", url)...)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.HasPrefix(errOut, "berth: cannot reach berth at "+url+": ") {
				t.Errorf("berth %v against a closed port: %v %q", args, err, errOut)
			}
		}
	})

	t.Run("get pods -w", func(t *testing.T) {
		s := startCLIStream(t, e.args("get", "pods", "-w", "--output-watch-events")...)
		header := s.waitLine(t, "the header", func(l string) bool { return strings.HasPrefix(l, "EVENT") })
		if f := strings.Fields(header); strings.Join(f, " ") != "EVENT NAMESPACE NAME READY STATUS RESTARTS AGE" {
			t.Errorf("header %q", header)
		}
		row := func(name string) func(string) bool {
			return func(l string) bool { f := strings.Fields(l); return len(f) >= 7 && f[2] == name }
		}
		if f := strings.Fields(s.waitLine(t, "the cli row", row("cli"))); f[0] != "ADDED" || f[3] != "2/2" || f[4] != "Running" {
			t.Errorf("cli row %v", f)
		}
		removeFile(t, e.b.Pods, "cli.yaml")
		l := s.waitLine(t, "cli's deletion", func(l string) bool { return row("cli")(l) && strings.Fields(l)[0] == "DELETED" })
		if strings.Index(l, strings.Fields(l)[4]) != strings.Index(header, "STATUS") {
			t.Errorf("watch row not under the header:\n%s\n%s", header, l)
		}
		s.interrupt(t)
		if s.stderr.String() != "" {
			t.Errorf("stderr: %q", s.stderr.String())
		}
	})
}

// As kubectl: -it with stdin that is not a terminal warns and runs the
// command without a terminal, so that piped input reaches it and its EOF
// ends it.
func TestCLIExecTTYWithPipedStdin(t *testing.T) {
	e := startExecEnv(t)
	const warning = "Unable to use a TTY - input is not a terminal or the right kind of file\n"
	r := berthExec(t, e.b, e.tokenFile, strings.NewReader("x\n"), "-it", "shell", "-c", "main", "--", "/testapp", "cat")
	if r != (execRun{"x\n", warning + "cat: 2 bytes\n", 0}) {
		t.Errorf("echo x | berth exec -it shell -- cat: %+v", r)
	}
	r = berthExec(t, e.b, e.tokenFile, strings.NewReader(""), "-it", "shell", "-c", "main", "--", "/testapp", "isatty")
	if r != (execRun{"stdin=false stdout=false stderr=false\n", warning, 0}) {
		t.Errorf("berth exec -it shell -- isatty < /dev/null: %+v", r)
	}
}

// berthCLIEnv is berthCLI with env added to the berthless environment.
func berthCLIEnv(t *testing.T, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, berthBin, args...)
	cmd.Env = append(berthlessEnv(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// agentConfigFile writes a config file for b as its operator would:
// server address, port, token file and extra YAML lines under server:.
func agentConfigFile(t *testing.T, b *Berth, tokenFile string, serverLines ...string) string {
	t.Helper()
	u, err := url.Parse(b.URL(""))
	if err != nil {
		t.Fatal(err)
	}
	y := fmt.Sprintf("node_name: %s\nserver:\n  address: 127.0.0.1\n  port: %s\n  token_file: %s\n", b.Node, u.Port(), tokenFile)
	for _, l := range serverLines {
		y += "  " + l + "\n"
	}
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", y)
	return filepath.Join(dir, "config.yaml")
}

// The client commands find the berth of the agent's config file without
// flags; a 401 says which flag, variable or file gives a token.
func TestCLIFindsBerthWithoutFlags(t *testing.T) {
	e := startCLIEnv(t)
	writeFile(t, e.b.Pods, "found.yaml", podYAML("found", Ctr{Name: "app", Args: []string{"sleep"}}))
	waitPodRunning(t, e.b.Node, "found", "app")
	env := []string{"BERTH_CONFIG=" + agentConfigFile(t, e.b, e.tokenFile)}
	waitFor(t, waitLong, "berth get pods (BERTH_CONFIG) lists found Running", func() (bool, string) {
		out, errOut, err := berthCLIEnv(t, env, "get", "pods")
		return err == nil && regexp.MustCompile(`(?m)^default +found +1/1 +Running +0 `).MatchString(out), fmt.Sprintf("%v %q\n%s", err, errOut, out)
	})
	if out, errOut, err := berthCLIEnv(t, env, "logs", "found"); err != nil || !strings.Contains(out, "testapp sleep starting\n") {
		t.Errorf("berth logs found (BERTH_CONFIG): %v %q %q", err, out, errOut)
	}
	if out, errOut, err := berthCLIEnv(t, []string{"BERTH_SERVER=" + e.b.URL(""), "BERTH_TOKEN_FILE=" + e.tokenFile}, "get", "pod/found", "-o", "name"); err != nil || out != "pod/found\n" {
		t.Errorf("berth get pod/found (BERTH_SERVER, BERTH_TOKEN_FILE): %v %q %q", err, out, errOut)
	}

	_, errOut, err := berthCLIEnv(t, nil, "get", "pods", "--server", e.b.URL(""))
	want := "berth: the server at " + e.b.URL("") + " wants a token (401 Unauthorized): pass --token-file FILE, set BERTH_TOKEN_FILE=FILE, " +
		"or name the agent's config (with server.token_file) by --config FILE or BERTH_CONFIG\n"
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || errOut != want {
		t.Errorf("get pods without a token: %v\n%q\nwant\n%q", err, errOut, want)
	}
}

// README's two lines: berth kubeconfig > FILE, then kubectl --kubeconfig
// FILE get pods, against a berth serving TLS with a token, found through
// its config file.
func TestCLIKubeconfigForKubectl(t *testing.T) {
	bin := kubectlBinary(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("e2e-"+randHex(8)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startBerth(t, Options{TLS: true, Env: []string{"BERTH_SERVER_TOKEN_FILE=" + tokenFile}})
	writeFile(t, b.Pods, "kc.yaml", podYAML("kc", Ctr{Name: "app", Args: []string{"sleep"}}))
	waitPodRunning(t, b.Node, "kc", "app")
	var tlsLines []string
	for _, kv := range b.env {
		if v, ok := strings.CutPrefix(kv, "BERTH_SERVER_TLS_CERT_FILE="); ok {
			tlsLines = append(tlsLines, "tls:", "  cert_file: "+v)
		}
		if v, ok := strings.CutPrefix(kv, "BERTH_SERVER_TLS_KEY_FILE="); ok {
			tlsLines = append(tlsLines, "  key_file: "+v)
		}
	}
	cfg := agentConfigFile(t, b, tokenFile, tlsLines...)

	// berth's own commands find it the same way, trusting its certificate.
	if out, errOut, err := berthCLIEnv(t, []string{"BERTH_CONFIG=" + cfg}, "get", "pods", "kc", "-o", "name"); err != nil || out != "pod/kc\n" {
		t.Errorf("berth get pods kc over TLS (BERTH_CONFIG): %v %q %q", err, out, errOut)
	}
	out, errOut, err := berthCLIEnv(t, []string{"BERTH_CONFIG=" + cfg}, "kubeconfig")
	if err != nil || errOut != "" || !strings.Contains(out, "server: "+b.URL("")) {
		t.Fatalf("berth kubeconfig: %v %q\n%s", err, errOut, out)
	}
	if tok, _ := os.ReadFile(tokenFile); strings.Contains(out, strings.TrimSpace(string(tok))) {
		t.Errorf("the token is in the kubeconfig:\n%s", out)
	}
	dir := t.TempDir()
	writeFile(t, dir, "berth.yaml", out)
	kubectlGetsPod(t, bin, filepath.Join(dir, "berth.yaml"), "kc")

	// The default agent: loopback http, no token; the kubeconfig has no
	// credentials and kubectl needs none.
	open := startBerth(t, Options{})
	writeFile(t, open.Pods, "open.yaml", podYAML("open", Ctr{Name: "app", Args: []string{"sleep"}}))
	waitPodRunning(t, open.Node, "open", "app")
	out, errOut, err = berthCLIEnv(t, nil, "kubeconfig", "--server", open.URL(""), "--context", "open")
	if err != nil || errOut != "" || strings.Contains(out, "token") {
		t.Fatalf("berth kubeconfig of an open berth: %v %q\n%s", err, errOut, out)
	}
	writeFile(t, dir, "open.yaml", out)
	kubectlGetsPod(t, bin, filepath.Join(dir, "open.yaml"), "open")
}

// kubectlGetsPod waits until kubectl --kubeconfig kubeconfig get pods
// lists pod Running.
func kubectlGetsPod(t *testing.T, bin, kubeconfig, pod string) {
	t.Helper()
	waitFor(t, waitLong, "kubectl --kubeconfig FILE get pods lists "+pod+" Running", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "--kubeconfig", kubeconfig, "get", "pods")
		cmd.Env = append(berthlessEnv(), "HOME="+t.TempDir(), "KUBECONFIG=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return err == nil && regexp.MustCompile(`(?m)^`+pod+` +1/1 +Running +0 +\S+$`).MatchString(stdout.String()),
			fmt.Sprintf("%v %q\n%s", err, stderr.String(), stdout.String())
	})
}
