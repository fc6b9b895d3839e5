// Package e2e runs the real berth binary as a subprocess against the real
// Docker engine. See README.md in this directory.
package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/runtime"
)

const (
	testImage = "berth/testapp:1"
	// labelRun marks containers the tests create directly (not berth), so
	// the final sweep finds them. Deliberately outside the io.berth. prefix.
	labelRun = "e2e.berth.test.run"

	pollEvery = 100 * time.Millisecond
	// waitLong bounds waits for things berth does (container starts and
	// removals); it is a deadline against hangs, not a performance target.
	waitLong = 60 * time.Second
)

var (
	runID = randHex(4)

	berthBin   string          // the berth binary under test
	testappBin string          // the static test program in testImage
	dk         *runtime.Docker // shared engine client
	setupErr   error

	nodesMu sync.Mutex
	nodes   []string // every node name used, for the final sweep
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // every test and benchmark skips
	}
	tmp, err := os.MkdirTemp("", "berth-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	start := time.Now()
	setupErr = setup(tmp)
	if setupErr != nil {
		fmt.Fprintln(os.Stderr, "e2e setup failed:", setupErr)
	} else if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "e2e setup (build berth, testapp, image) took %s\n", time.Since(start).Round(time.Millisecond))
	}
	code := m.Run()
	if dk != nil {
		sweep()
		dk.Close()
	}
	os.RemoveAll(tmp)
	os.Exit(code)
}

// setup builds berth and the testapp image. Failures are reported by every
// test (need), so an unreachable engine fails the run instead of skipping.
func setup(tmp string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	berthBin = filepath.Join(tmp, "berth")
	if err := testutil.BuildStatic(ctx, ".", berthBin); err != nil {
		return err
	}
	testapp := filepath.Join(tmp, "testapp")
	testappBin = testapp
	if err := testutil.BuildStatic(ctx, "./test/testapp", testapp); err != nil {
		return err
	}

	d, err := runtime.NewDocker("")
	if err != nil {
		return err
	}
	pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
	defer pcancel()
	if err := d.Ping(pctx); err != nil {
		d.Close()
		return fmt.Errorf("Docker engine unreachable (is dockerd running?): %w", err)
	}
	dk = d
	// Rebuild the image every run so it holds the current testapp; the
	// previous image, now untagged, is removed unless something still uses it.
	old, _ := d.Client().ImageInspect(ctx, testImage)
	if err := d.BuildImage(ctx, testImage, testapp, "/testapp", []string{"/testapp"}); err != nil {
		return err
	}
	if cur, err := d.Client().ImageInspect(ctx, testImage); err == nil && old.ID != "" && old.ID != cur.ID {
		_, _ = d.Client().ImageRemove(ctx, old.ID, image.RemoveOptions{})
	}
	return nil
}

// need skips in -short mode and fails when setup failed.
func need(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("end-to-end: needs Docker; skipped in -short mode")
	}
	if setupErr != nil {
		tb.Fatalf("e2e setup: %v", setupErr)
	}
}

func cli() *client.Client { return dk.Client() }

// sweep removes whatever a crashed or timed-out test left behind.
func sweep() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nodesMu.Lock()
	sets := []map[string]string{{labelRun: runID}}
	for _, n := range nodes {
		sets = append(sets, map[string]string{runtime.LabelNode: n})
	}
	nodesMu.Unlock()
	for _, match := range sets {
		list, err := cli().ContainerList(ctx, container.ListOptions{All: true, Filters: labelArgs(match)})
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e sweep:", err)
			return
		}
		for _, c := range list {
			fmt.Fprintln(os.Stderr, "e2e sweep: removing leftover container", c.ID[:12], c.Names)
			_ = dk.RemoveContainer(ctx, c.ID)
		}
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

func freePort(tb testing.TB) int { return testutil.FreePort(tb) }

// ---------------------------------------------------------------- berth

// Options configure one berth agent; zero values get fresh defaults.
type Options struct {
	Node string   // default "e2e-<run>-<random>"
	Pods string   // manifest directory; default a new temp dir
	Root string   // root_dir; default a new temp dir
	Env  []string // extra KEY=VALUE entries, appended last
	// ReadyPath is polled after each start until it answers 200; default
	// /readyz (use /healthz when a source is meant to be unreachable).
	ReadyPath string
	// TLS serves the API over https with a fresh test CA's certificate for
	// 127.0.0.1 (server.tls.cert_file and key_file); URL then answers
	// https URLs and the harness's clients trust that CA (Berth.CA).
	TLS bool
	// SelfSigned serves https with the certificate berth generates under
	// Root/pki (server.tls.self_signed), which becomes Berth.CA.
	SelfSigned bool
}

// Berth is one berth agent under test, restartable on the same node, dirs
// and log.
type Berth struct {
	tb   testing.TB
	Node string
	Pods string
	Root string
	Log  string // stderr+stdout of every process, appended
	env  []string
	// ReadyPath is what Start waits on (see Options.ReadyPath).
	ReadyPath string
	// CA is the CA file that verifies the https API ("" without TLS).
	CA string

	mu     sync.Mutex
	port   int
	cmd    *exec.Cmd
	done   chan struct{} // closed when cmd exited
	exit   error         // cmd.Wait's result, valid once done is closed
	starts int
}

// startBerth starts `berth run` and waits until /readyz answers. Cleanup
// stops it, prints its log if the test failed, and force-removes every
// container labelled with its node.
func startBerth(tb testing.TB, o Options) *Berth {
	tb.Helper()
	need(tb)
	if o.Node == "" {
		o.Node = "e2e-" + runID + "-" + randHex(3)
	}
	if o.Pods == "" {
		o.Pods = tb.TempDir()
	}
	if o.Root == "" {
		o.Root = tb.TempDir()
	}
	nodesMu.Lock()
	nodes = append(nodes, o.Node)
	nodesMu.Unlock()
	b := &Berth{
		tb: tb, Node: o.Node, Pods: o.Pods, Root: o.Root,
		Log: filepath.Join(tb.TempDir(), "berth.log"), env: o.Env, ReadyPath: o.ReadyPath,
	}
	if b.ReadyPath == "" {
		b.ReadyPath = "/readyz"
	}
	if o.TLS {
		ca := testutil.NewTestCA(tb, tb.TempDir())
		b.CA = ca.CAFile
		b.env = append([]string{"BERTH_SERVER_TLS_CERT_FILE=" + ca.ServerCert, "BERTH_SERVER_TLS_KEY_FILE=" + ca.ServerKey}, b.env...)
	}
	if o.SelfSigned {
		b.CA = filepath.Join(b.Root, "pki", "berth-serving.crt")
		b.env = append([]string{"BERTH_SERVER_TLS_SELF_SIGNED=true"}, b.env...)
	}
	tb.Cleanup(b.cleanup)
	b.Start(tb)
	return b
}

// Start runs a new berth process (after Kill or Stop) and waits for /readyz.
// tb is the running test or subtest, which failures are reported on.
func (b *Berth) Start(tb testing.TB) {
	tb.Helper()
	b.mu.Lock()
	if b.cmd != nil {
		b.mu.Unlock()
		tb.Fatal("berth already running")
	}
	b.starts++
	b.port = freePort(tb)
	logf, err := os.OpenFile(b.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		b.mu.Unlock()
		tb.Fatal(err)
	}
	fmt.Fprintf(logf, "=== e2e: berth start #%d (node %s, port %d) at %s\n", b.starts, b.Node, b.port, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(berthBin, "run")
	cmd.Env = append(berthlessEnv(),
		"BERTH_NODE_NAME="+b.Node,
		"BERTH_ROOT_DIR="+b.Root,
		"BERTH_SOURCES_FILE_PATH="+b.Pods,
		"BERTH_SERVER_ADDRESS=127.0.0.1",
		"BERTH_SERVER_PORT="+strconv.Itoa(b.port),
		"BERTH_BACKOFF_INITIAL=200ms",
		"BERTH_BACKOFF_MAX=2s",
		"BERTH_SOURCES_FILE_RESCAN=1s",
		"BERTH_CONTROLLER_RESYNC=5s",
		"BERTH_CADVISOR_ENABLED=false",
	)
	cmd.Env = append(cmd.Env, b.env...)
	cmd.Stdout = logf
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		b.mu.Unlock()
		tb.Fatalf("start berth: %v", err)
	}
	done := make(chan struct{})
	go func() {
		err := cmd.Wait()
		logf.Close()
		b.mu.Lock()
		b.exit = err
		b.mu.Unlock()
		close(done)
	}()
	b.cmd, b.done = cmd, done
	b.mu.Unlock()
	b.waitReady(tb)
}

// berthlessEnv is the test's environment without BERTH_ variables.
func berthlessEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BERTH_") {
			env = append(env, kv)
		}
	}
	return env
}

func (b *Berth) waitReady(tb testing.TB) {
	tb.Helper()
	var c *http.Client // once b.CA exists: berth writes a self-signed one as it starts
	deadline := time.Now().Add(30 * time.Second)
	last := ""
	for {
		select {
		case <-b.done:
			tb.Fatalf("berth exited before it was ready; log:\n%s", b.LogText())
		default:
		}
		if _, err := os.Stat(b.CA); c == nil && (b.CA == "" || err == nil) {
			c = b.HTTPClient(tb, 2*time.Second)
		}
		var resp *http.Response
		err := fmt.Errorf("no certificate at %s yet", b.CA)
		if c != nil {
			resp, err = c.Get(b.URL(b.ReadyPath))
		}
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(body))
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			tb.Fatalf("berth not ready after 30s: %s", last)
		}
		time.Sleep(pollEvery)
	}
}

// URL returns the address of path on berth's API.
func (b *Berth) URL(path string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	scheme := "http"
	if b.CA != "" {
		scheme = "https"
	}
	return fmt.Sprintf("%s://127.0.0.1:%d%s", scheme, b.port, path)
}

// HTTPClient is a client of berth's API with timeout, trusting b.CA.
func (b *Berth) HTTPClient(tb testing.TB, timeout time.Duration) *http.Client {
	tb.Helper()
	c := &http.Client{Timeout: timeout}
	if b.CA != "" {
		pemCA, err := os.ReadFile(b.CA)
		if err != nil {
			tb.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pemCA)
		c.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	}
	return c
}

// Kill sends SIGKILL and waits for the process to be gone.
func (b *Berth) Kill(tb testing.TB) {
	tb.Helper()
	b.signal(tb, syscall.SIGKILL, 10*time.Second)
}

// Stop sends SIGTERM and waits up to 20 s for an exit with status 0; it
// reports a test error otherwise (and kills berth after the wait).
func (b *Berth) Stop(tb testing.TB) {
	tb.Helper()
	if b.signal(tb, syscall.SIGTERM, 20*time.Second) {
		b.mu.Lock()
		err := b.exit
		b.mu.Unlock()
		if err != nil {
			tb.Errorf("berth exited with %v after SIGTERM, want status 0", err)
		}
	}
}

// signal reports whether a running berth exited within wait of sig.
func (b *Berth) signal(tb testing.TB, sig syscall.Signal, wait time.Duration) bool {
	b.mu.Lock()
	cmd, done := b.cmd, b.done
	b.cmd = nil
	b.mu.Unlock()
	if cmd == nil {
		return false
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
		return true
	case <-time.After(wait):
	}
	tb.Errorf("berth did not exit within %s of %s; killing it", wait, sig)
	_ = cmd.Process.Kill()
	<-done
	return false
}

// LogText returns everything berth logged so far.
func (b *Berth) LogText() string {
	data, _ := os.ReadFile(b.Log)
	return string(data)
}

func (b *Berth) cleanup() {
	b.Stop(b.tb)
	defer unmountLeftovers(b.tb, b.Root)
	if b.tb.Failed() {
		b.tb.Logf("berth log (%s):\n%s", b.Log, b.LogText())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	list, err := cli().ContainerList(ctx, container.ListOptions{All: true,
		Filters: labelArgs(map[string]string{runtime.LabelNode: b.Node})})
	if err != nil {
		b.tb.Errorf("cleanup: list containers of node %s: %v", b.Node, err)
		return
	}
	for _, c := range list {
		if err := dk.RemoveContainer(ctx, c.ID); err != nil {
			if engineCannotRemove(err) {
				// Docker's own leftover after a dockerd restart in this
				// sandbox (a busy overlay mount): not berth's doing, and
				// berth itself leaves such containers alone.
				b.tb.Logf("cleanup: the engine cannot remove %s: %v", c.ID[:12], err)
				continue
			}
			b.tb.Errorf("cleanup: %v", err)
		}
	}
}

// engineCannotRemove reports the engine failing to remove a dead
// container's root filesystem.
func engineCannotRemove(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "device or resource busy") || strings.Contains(msg, "is already in progress")
}

// getJSON GETs path from berth's API into v.
func (b *Berth) getJSON(path string, v any) error { return b.getJSONAs("", path, v) }

// getJSONAs is getJSON with the bearer token read from tokenFile ("" sends
// none).
func (b *Berth) getJSONAs(tokenFile, path string, v any) error {
	req, err := http.NewRequest(http.MethodGet, b.URL(path), nil)
	if err != nil {
		return err
	}
	if tokenFile != "" {
		tok, err := os.ReadFile(tokenFile)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	}
	resp, err := b.HTTPClient(b.tb, 5*time.Second).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, bytes.TrimSpace(body))
	}
	return json.Unmarshal(body, v)
}

// ListPods returns berth's GET /pods.
func (b *Berth) ListPods() (*v1.PodList, error) {
	var l v1.PodList
	return &l, b.getJSON("/pods", &l)
}

// Pod returns berth's GET /pods/default/<name>; nil, nil when 404.
func (b *Berth) Pod(name string) (*v1.Pod, error) {
	var p v1.Pod
	err := b.getJSON("/pods/default/"+name, &p)
	if err != nil && strings.Contains(err.Error(), ": 404 ") {
		return nil, nil
	}
	return &p, err
}

// Metrics returns the text of GET /metrics.
func (b *Berth) Metrics() (string, error) {
	c := b.HTTPClient(b.tb, 5*time.Second)
	resp, err := c.Get(b.URL("/metrics"))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /metrics: %d", resp.StatusCode)
	}
	return string(body), err
}

// metricValue returns the value of the exact series (name plus labels as
// rendered, e.g. `berth_pods{phase="Running"}`) in a text exposition.
func metricValue(text, series string) (float64, bool) {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil
		}
	}
	return 0, false
}

// ---------------------------------------------------------------- files

// writeFile writes name in dir atomically: a hidden temp file (which the
// file source ignores), then a rename.
func writeFile(tb testing.TB, dir, name, content string) {
	tb.Helper()
	tmp := filepath.Join(dir, "."+name+"."+randHex(3)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		tb.Fatal(err)
	}
}

func removeFile(tb testing.TB, dir, name string) {
	tb.Helper()
	if err := os.Remove(filepath.Join(dir, name)); err != nil {
		tb.Fatal(err)
	}
}

// Ctr is one container of a generated pod manifest.
type Ctr struct {
	Name     string
	Image    string   // default testImage
	Args     []string // default ["serve"]
	Env      [][2]string
	Port     int // containerPort, 0 for none
	HostPort int
}

// podYAML renders a v1 Pod manifest (namespace default, grace period 2 s).
func podYAML(name string, ctrs ...Ctr) string {
	var s strings.Builder
	fmt.Fprintf(&s, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  terminationGracePeriodSeconds: 2\n  containers:\n", name)
	for _, c := range ctrs {
		img := c.Image
		if img == "" {
			img = testImage
		}
		args := c.Args
		if args == nil {
			args = []string{"serve"}
		}
		fmt.Fprintf(&s, "    - name: %s\n      image: %q\n      args: [", c.Name, img)
		for i, a := range args {
			if i > 0 {
				s.WriteString(", ")
			}
			fmt.Fprintf(&s, "%q", a)
		}
		s.WriteString("]\n")
		if len(c.Env) > 0 {
			s.WriteString("      env:\n")
			for _, kv := range c.Env {
				fmt.Fprintf(&s, "        - name: %s\n          value: %q\n", kv[0], kv[1])
			}
		}
		if c.Port != 0 {
			fmt.Fprintf(&s, "      ports:\n        - containerPort: %d\n", c.Port)
			if c.HostPort != 0 {
				fmt.Fprintf(&s, "          hostPort: %d\n          hostIP: 127.0.0.1\n", c.HostPort)
			}
		}
	}
	return s.String()
}

// webPod is the standard two-container test pod: web (PORT 8080, MESSAGE
// hello-e2e, published on hostPort if non-zero) and side (PORT 8081,
// MESSAGE sideMsg).
func webPod(name string, hostPort int, sideMsg string) string {
	return podYAML(name,
		Ctr{Name: "web", Env: [][2]string{{"PORT", "8080"}, {"MESSAGE", "hello-e2e"}}, Port: 8080, HostPort: hostPort},
		Ctr{Name: "side", Env: [][2]string{{"PORT", "8081"}, {"MESSAGE", sideMsg}}},
	)
}

// ---------------------------------------------------------------- docker

func labelArgs(match map[string]string) filters.Args {
	args := filters.NewArgs()
	for k, v := range match {
		args.Add("label", k+"="+v)
	}
	return args
}

// listContainers lists containers (all states) carrying every label of match.
func listContainers(tb testing.TB, match map[string]string) []container.Summary {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	list, err := cli().ContainerList(ctx, container.ListOptions{All: true, Filters: labelArgs(match)})
	if err != nil {
		tb.Fatalf("list containers %v: %v", match, err)
	}
	return list
}

// podContainers lists every container berth made on node for pod default/name.
func podContainers(tb testing.TB, node, pod string) []container.Summary {
	tb.Helper()
	return listContainers(tb, map[string]string{
		runtime.LabelNode: node, runtime.LabelPodNamespace: "default", runtime.LabelPodName: pod,
	})
}

// running maps container name (label) → IDs of running instances.
func running(list []container.Summary) map[string][]string {
	out := map[string][]string{}
	for _, c := range list {
		if c.State == "running" {
			n := c.Labels[runtime.LabelContainerName]
			out[n] = append(out[n], c.ID)
		}
	}
	return out
}

func describe(list []container.Summary) string {
	var lines []string
	for _, c := range list {
		lines = append(lines, fmt.Sprintf("%s %s %s restarts=%s", c.ID[:12], strings.Join(c.Names, ","), c.State, c.Labels[runtime.LabelRestartCount]))
	}
	sort.Strings(lines)
	return "[" + strings.Join(lines, "; ") + "]"
}

// waitFor polls cond every pollEvery until it reports true, failing the
// test with cond's last detail after timeout.
func waitFor(tb testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, detail := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s: %s", timeout, what, detail)
		}
		time.Sleep(pollEvery)
	}
}

// exactlyOne reports whether list runs exactly one instance of each of names
// (which should include "POD"), and those IDs.
func exactlyOne(list []container.Summary, names []string) (map[string]string, bool) {
	run := running(list)
	ids := map[string]string{}
	for _, n := range names {
		if len(run[n]) != 1 {
			return nil, false
		}
		ids[n] = run[n][0]
	}
	return ids, len(run) == len(names)
}

// waitPodRunning waits until pod runs exactly one container for each of its
// app containers and the sandbox, and returns name → container ID.
func waitPodRunning(tb testing.TB, node, pod string, apps ...string) map[string]string {
	tb.Helper()
	names := append([]string{"POD"}, apps...)
	var ids map[string]string
	waitFor(tb, waitLong, "pod "+pod+" running "+strings.Join(names, ","), func() (bool, string) {
		list := podContainers(tb, node, pod)
		var ok bool
		ids, ok = exactlyOne(list, names)
		return ok, describe(list)
	})
	return ids
}

// waitPodGone waits until no container (any state) of pod is left.
func waitPodGone(tb testing.TB, node, pod string) {
	tb.Helper()
	waitFor(tb, waitLong, "containers of pod "+pod+" removed", func() (bool, string) {
		list := podContainers(tb, node, pod)
		return len(list) == 0, describe(list)
	})
}

// assertStable checks for d that pod keeps running exactly the containers
// want (name → ID) and that no other container of the pod appears.
func assertStable(tb testing.TB, node, pod string, want map[string]string, d time.Duration) {
	tb.Helper()
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	deadline := time.Now().Add(d)
	for {
		list := podContainers(tb, node, pod)
		ids, ok := exactlyOne(list, names)
		if !ok || len(list) != len(want) {
			tb.Fatalf("pod %s: want exactly %v, have %s", pod, want, describe(list))
		}
		for n, id := range want {
			if ids[n] != id {
				tb.Fatalf("pod %s: container %s replaced: %s → %s; have %s", pod, n, id[:12], ids[n][:12], describe(list))
			}
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// inspect returns a container's engine view.
func inspect(tb testing.TB, id string) container.InspectResponse {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := cli().ContainerInspect(ctx, id)
	if err != nil {
		tb.Fatalf("inspect %s: %v", id, err)
	}
	return resp
}

// ---------------------------------------------------------------- http

// httpWant polls GET url until it answers 200 with body want.
func httpWant(tb testing.TB, url, want string) {
	tb.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	waitFor(tb, 30*time.Second, "GET "+url+" = "+strconv.Quote(want), func() (bool, string) {
		resp, err := c.Get(url)
		if err != nil {
			return false, err.Error()
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK && string(body) == want,
			fmt.Sprintf("%d %q", resp.StatusCode, body)
	})
}

// startBerthWithToken starts a berth whose API wants a bearer token
// (server.token_file) and returns the file to pass as --token-file.
func startBerthWithToken(t *testing.T) (*Berth, string) {
	t.Helper()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("e2e-"+randHex(8)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return startBerth(t, Options{Env: []string{"BERTH_SERVER_TOKEN_FILE=" + tokenFile}}), tokenFile
}
