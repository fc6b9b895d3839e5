package e2e

// Fault injection: dockerd restarted under berth, berth killed -9 in the
// middle of a reconcile, a flood of manifest-directory operations, and
// hostile manifests. Each test ends with faultCheck: every desired pod runs
// exactly one container per pod container and sandbox (no duplicate, no lost
// pod, nothing left "created"), pods that are not desired have no container,
// the unmanaged containers made before the fault still exist with the same
// IDs, and berth is alive and answers /healthz and /readyz.

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"

	"github.com/docker/docker/api/types/container"

	"github.com/berth-dev/berth/runtime"
)

// ---------------------------------------------------------------- checks

// faultForeign creates, before a fault, the two containers berth must never
// touch: one without berth's labels (but with a berth-like name), and one
// labelled io.berth.managed=true for another io.berth.node that claims the
// same pod as one of ours. Both are removed when the test ends.
func faultForeign(t *testing.T, node, pod string) map[string]string {
	t.Helper()
	tag := randHex(4)
	return map[string]string{
		"unlabelled": createForeign(t, "berth_app_"+pod+"_default_"+tag+"_0", map[string]string{}),
		"other-node": createForeign(t, "berth_POD_"+pod+"_default_"+tag+"_0", map[string]string{
			runtime.LabelManaged:       "true",
			runtime.LabelNode:          node + "-other",
			runtime.LabelPodNamespace:  "default",
			runtime.LabelPodName:       pod,
			runtime.LabelPodUID:        "00000000-0000-0000-0000-000000000000",
			runtime.LabelContainerName: "POD",
			runtime.LabelContainerHash: "deadbeef",
			runtime.LabelSource:        "file",
			runtime.LabelRestartCount:  "0",
			runtime.LabelAttempt:       "0",
		}),
	}
}

// wantPod is one desired pod of faultCheck.
type wantPod struct {
	apps []string
	env  map[string]string // app container → an "NAME=value" its env must hold
}

type checkOpts struct {
	// noExited: not even one exited "previous" instance may be left (nothing
	// crashed and nothing was restarted).
	noExited bool
	// foreignRunning: the unmanaged containers must still run (false after a
	// dockerd restart, which stops every container).
	foreignRunning bool
	converge       time.Duration // default waitLong
	stable         time.Duration // default 3 s
}

// berthAlive reports whether the berth process is running.
func berthAlive(b *Berth) bool {
	b.mu.Lock()
	cmd, done := b.cmd, b.done
	b.mu.Unlock()
	if cmd == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// nodeState checks the node's containers against want once; it returns the
// running IDs by pod and container name when they match.
func nodeState(tb testing.TB, node string, want map[string]wantPod, o checkOpts) (map[string]map[string]string, bool, string) {
	list := listContainers(tb, map[string]string{runtime.LabelNode: node})
	byPod := map[string][]container.Summary{}
	for _, c := range list {
		byPod[c.Labels[runtime.LabelPodName]] = append(byPod[c.Labels[runtime.LabelPodName]], c)
	}
	var problems []string
	ids := map[string]map[string]string{}
	for pod, cs := range byPod {
		if _, ok := want[pod]; !ok {
			problems = append(problems, fmt.Sprintf("pod %s is not desired but has %s", pod, describe(cs)))
		}
	}
	for pod, w := range want {
		cs := byPod[pod]
		names := append([]string{"POD"}, w.apps...)
		run, ok := exactlyOne(cs, names)
		if !ok {
			problems = append(problems, fmt.Sprintf("pod %s: want one running %v, have %s", pod, names, describe(cs)))
			continue
		}
		stopped := map[string]int{}
		for _, c := range cs {
			switch {
			case c.State == "running":
			case c.State == "dead" || c.State == "removing":
				// The engine failed to remove it (after a dockerd restart a
				// container's root filesystem can stay mounted): Docker's
				// leftover, which berth leaves alone and does not count.
			case c.State == "created":
				problems = append(problems, fmt.Sprintf("pod %s: container %s left created", pod, c.Names))
			default:
				stopped[c.Labels[runtime.LabelContainerName]]++
			}
		}
		for name, n := range stopped {
			if n > 0 && (o.noExited || name == "POD" || n > 1) {
				problems = append(problems, fmt.Sprintf("pod %s: %d stopped %s instances left: %s", pod, n, name, describe(cs)))
			}
		}
		ids[pod] = run
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		if len(problems) > 6 {
			problems = append(problems[:6], fmt.Sprintf("(%d more)", len(problems)-6))
		}
		return nil, false, strings.Join(problems, "\n")
	}
	// Each app container joins its pod's running sandbox and has its env.
	for pod, w := range want {
		for _, app := range w.apps {
			c := inspect(tb, ids[pod][app])
			if nm := string(c.HostConfig.NetworkMode); nm != "container:"+ids[pod]["POD"] {
				return nil, false, fmt.Sprintf("pod %s: %s has network %s, not the running sandbox %s", pod, app, nm, ids[pod]["POD"][:12])
			}
			if kv := w.env[app]; kv != "" && !contains(c.Config.Env, kv) {
				return nil, false, fmt.Sprintf("pod %s: %s env %v lacks %s", pod, app, c.Config.Env, kv)
			}
		}
	}
	return ids, true, ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// faultCheck is the common end of every fault test (see the file comment).
func faultCheck(t *testing.T, b *Berth, want map[string]wantPod, foreign map[string]string, o checkOpts) {
	t.Helper()
	if o.converge == 0 {
		o.converge = waitLong
	}
	if o.stable == 0 {
		o.stable = 3 * time.Second
	}
	start := time.Now()
	if !berthAlive(b) {
		t.Fatalf("berth is not running")
	}

	// No lost pod, no duplicate, nothing left half-made.
	var ids map[string]map[string]string
	for {
		got, ok, detail := nodeState(t, b.Node, want, o)
		if ok {
			ids = got
			break
		}
		if time.Since(start) > o.converge {
			faultDiagnose(t, b)
			t.Fatalf("timed out after %s waiting for %d pods to converge: %s", o.converge, len(want), detail)
		}
		time.Sleep(pollEvery)
	}
	converged := time.Since(start)

	// And it stays so: no container replaced, none added, for a while
	// (longer than a rescan, 1 s, and about a resync, 5 s, in these tests).
	deadline := time.Now().Add(o.stable)
	for time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		got, ok, detail := nodeState(t, b.Node, want, o)
		if !ok {
			t.Fatalf("after converging, the node changed: %s", detail)
		}
		for pod, m := range ids {
			for name, id := range m {
				if got[pod][name] != id {
					t.Fatalf("after converging, pod %s: %s replaced (%s → %s)", pod, name, id[:12], got[pod][name][:12])
				}
			}
		}
	}

	for _, c := range listContainers(t, map[string]string{runtime.LabelNode: b.Node}) {
		if c.State == "dead" || c.State == "removing" {
			t.Logf("note: the engine left %s %v %s (it could not remove it; not counted)", c.ID[:12], c.Names, c.State)
		}
	}

	// berth's own view agrees.
	waitFor(t, 30*time.Second, "GET /pods lists exactly the desired pods, Running", func() (bool, string) {
		l, err := b.ListPods()
		if err != nil {
			return false, err.Error()
		}
		seen := map[string]bool{}
		var bad []string
		for _, p := range l.Items {
			if _, ok := want[p.Name]; !ok || p.Status.Phase != "Running" {
				bad = append(bad, p.Name+":"+string(p.Status.Phase))
			}
			seen[p.Name] = true
		}
		for pod := range want {
			if !seen[pod] {
				bad = append(bad, pod+":missing")
			}
		}
		sort.Strings(bad)
		return len(bad) == 0, strings.Join(bad, " ")
	})

	// The unmanaged containers are where they were.
	for what, id := range foreign {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		c, err := cli().ContainerInspect(ctx, id)
		cancel()
		if err != nil {
			t.Errorf("%s container %s: %v (berth must never remove it)", what, id[:12], err)
			continue
		}
		if c.ID != id {
			t.Errorf("%s container: ID %s, want %s", what, c.ID, id)
		}
		if o.foreignRunning && !c.State.Running {
			t.Errorf("%s container %s (%s) is %s, want running untouched", what, id[:12], c.Name, c.State.Status)
		}
		if c.RestartCount != 0 {
			t.Errorf("%s container %s was restarted", what, id[:12])
		}
	}

	// berth is healthy.
	for _, path := range []string{"/healthz", "/readyz"} {
		waitFor(t, 30*time.Second, "GET "+path+" 200", func() (bool, string) {
			code, body := httpGet(b.URL(path))
			return code == http.StatusOK, fmt.Sprintf("%d %s", code, body)
		})
	}
	if !berthAlive(b) {
		t.Fatalf("berth exited")
	}
	t.Logf("checks: %d pods converged after %s, stable for %s; %d unmanaged containers intact; berth healthy; berth log: %s",
		len(want), converged.Round(time.Millisecond), o.stable, len(foreign), logSummary(b.LogText()))
}

// logSummary counts berth's warning and error messages by message.
func logSummary(text string) string {
	counts := map[string]int{}
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, "level=WARN") && !strings.Contains(line, "level=ERROR") {
			continue
		}
		msg := "?"
		if i := strings.Index(line, "msg="); i >= 0 {
			msg = line[i+4:]
			if strings.HasPrefix(msg, `"`) {
				if j := strings.Index(msg[1:], `"`); j >= 0 {
					msg = msg[1 : j+1]
				}
			} else if j := strings.IndexByte(msg, ' '); j >= 0 {
				msg = msg[:j]
			}
		}
		counts[msg]++
	}
	var parts []string
	for m, n := range counts {
		parts = append(parts, fmt.Sprintf("%q×%d", m, n))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "no warnings"
	}
	return strings.Join(parts, ", ")
}

// faultDiagnose logs the engine's view of the node's containers that do not
// run, and makes berth dump its goroutines (SIGQUIT) into its log, which the
// harness prints when the test fails.
func faultDiagnose(t *testing.T, b *Berth) {
	t.Helper()
	for _, c := range listContainers(t, map[string]string{runtime.LabelNode: b.Node}) {
		if c.State == "running" {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		in, err := cli().ContainerInspect(ctx, c.ID)
		cancel()
		if err != nil {
			t.Logf("diagnose %s %v: %v", c.ID[:12], c.Names, err)
			continue
		}
		t.Logf("diagnose %s %s: status %s, error %q, exit %d, created %s, started %s, finished %s",
			c.ID[:12], in.Name, in.State.Status, in.State.Error, in.State.ExitCode, in.Created, in.State.StartedAt, in.State.FinishedAt)
	}
	if berthAlive(b) {
		t.Logf("diagnose: SIGQUIT to berth for a goroutine dump (in its log)")
		b.signal(t, syscall.SIGQUIT, 10*time.Second)
	}
}

// httpGet returns the status code and body of GET url (0 on error).
func httpGet(url string) (int, string) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, strings.TrimSpace(string(body))
}

// appPod is a one-container pod (app, blocking until SIGTERM) whose env
// VERSION=version.
func appPod(name, version string) string {
	return podYAML(name, Ctr{Name: "app", Args: []string{"sleep"}, Env: [][2]string{{"VERSION", version}}})
}

// ---------------------------------------------------------------- dockerd

// dockerdProc is the running dockerd and how to start it again.
type dockerdProc struct {
	pid  int
	exe  string
	args []string
	env  []string
	dir  string
	log  string
}

// findDockerd finds the local dockerd serving the engine the tests use; it
// skips the test when the engine is not a local process it may restart.
func findDockerd(t *testing.T) *dockerdProc {
	t.Helper()
	if h := os.Getenv("DOCKER_HOST"); h != "" && h != "unix:///var/run/docker.sock" {
		t.Skipf("DOCKER_HOST=%s: the dockerd restart test needs the local /var/run/docker.sock engine", h)
	}
	if os.Geteuid() != 0 {
		t.Skip("restarting dockerd needs root")
	}
	var pids []int
	if b, err := os.ReadFile("/var/run/docker.pid"); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && procComm(pid) == "dockerd" {
			pids = []int{pid}
		}
	}
	if len(pids) == 0 {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if pid, err := strconv.Atoi(e.Name()); err == nil && procComm(pid) == "dockerd" && procAlive(pid) {
				pids = append(pids, pid)
			}
		}
	}
	if len(pids) != 1 {
		t.Skipf("found %d dockerd processes (%v); the test restarts exactly one local dockerd", len(pids), pids)
	}
	pid := pids[0]
	d := &dockerdProc{pid: pid}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(raw) == 0 {
		t.Skipf("cannot read dockerd's command line: %v", err)
	}
	d.args = strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	if env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err == nil && len(env) > 0 {
		d.env = strings.Split(strings.TrimRight(string(env), "\x00"), "\x00")
	} else {
		d.env = os.Environ()
	}
	d.dir, _ = os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if d.dir == "" {
		d.dir = "/"
	}
	d.exe, _ = os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if d.exe == "" || strings.HasSuffix(d.exe, " (deleted)") {
		if p, err := exec.LookPath(d.args[0]); err == nil {
			d.exe = p
		} else {
			t.Skipf("cannot find dockerd's binary: %v", err)
		}
	}
	// Keep writing to dockerd's log file when it has one.
	if out, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/1", pid)); err == nil && strings.HasPrefix(out, "/") {
		if fi, err := os.Stat(out); err == nil && fi.Mode().IsRegular() {
			d.log = out
		}
	}
	if d.log == "" {
		d.log = filepath.Join(os.TempDir(), "berth-e2e-dockerd.log")
	}
	return d
}

func procComm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// procAlive reports whether pid exists and is not a zombie.
func procAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

func anyDockerd() bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && procComm(pid) == "dockerd" && procAlive(pid) {
			return true
		}
	}
	return false
}

// stop sends SIGTERM and waits for dockerd to exit (SIGKILL after wait).
func (d *dockerdProc) stop(t *testing.T, wait time.Duration) {
	t.Helper()
	if err := syscall.Kill(d.pid, syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM dockerd %d: %v", d.pid, err)
	}
	deadline := time.Now().Add(wait)
	for procAlive(d.pid) {
		if time.Now().After(deadline) {
			t.Errorf("dockerd %d still running %s after SIGTERM; killing it", d.pid, wait)
			_ = syscall.Kill(d.pid, syscall.SIGKILL)
			for i := 0; i < 100 && procAlive(d.pid); i++ {
				time.Sleep(100 * time.Millisecond)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// start runs dockerd again, detached in its own session, as it ran before.
func (d *dockerdProc) start() error {
	logf, err := os.OpenFile(d.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "=== berth e2e: restarting dockerd (%s) at %s\n", strings.Join(d.args, " "), time.Now().Format(time.RFC3339Nano))
	cmd := &exec.Cmd{Path: d.exe, Args: d.args, Env: d.env, Dir: d.dir, Stdout: logf, Stderr: logf,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	if err := cmd.Start(); err != nil {
		return err
	}
	d.pid = cmd.Process.Pid
	go func() { _ = cmd.Wait() }() // reap it if it exits while the tests run
	return nil
}

// dockerAnswers waits up to wait for the engine to answer a ping.
func dockerAnswers(wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := dk.Ping(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// 1. dockerd restarts under berth with pods running: the event stream
// reconnects and a relist repairs the state (dockerd stopped every
// container, and Docker restarts none of berth's: restart policy no).
func TestFaultDockerdRestart(t *testing.T) {
	need(t)
	d := findDockerd(t)
	b := startBerth(t, Options{})
	foreign := faultForeign(t, b.Node, "fault1")
	want := map[string]wantPod{}
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("fault%d", i)
		writeFile(t, b.Pods, name+".yaml", appPod(name, "v1"))
		want[name] = wantPod{apps: []string{"app"}, env: map[string]string{"app": "VERSION=v1"}}
	}
	writeFile(t, b.Pods, "faultweb.yaml", webPod("faultweb", 0, "side"))
	want["faultweb"] = wantPod{apps: []string{"web", "side"}}
	before := map[string]map[string]string{}
	for pod, w := range want {
		before[pod] = waitPodRunning(t, b.Node, pod, w.apps...)
	}
	m, err := b.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	restarts0, _ := metricValue(m, "berth_docker_event_stream_restarts_total")

	// Whatever happens below, dockerd is running again when the test ends
	// (this cleanup runs before berth's and the containers' cleanups).
	t.Cleanup(func() {
		if dockerAnswers(5*time.Second) == nil {
			return
		}
		if !anyDockerd() {
			t.Logf("cleanup: starting dockerd again: %s", strings.Join(d.args, " "))
			if err := d.start(); err != nil {
				t.Errorf("cleanup: start dockerd: %v", err)
				return
			}
		}
		if err := dockerAnswers(90 * time.Second); err != nil {
			t.Errorf("cleanup: dockerd does not answer: %v", err)
		}
	})

	t.Logf("stopping dockerd %d (%s; log %s)", d.pid, strings.Join(d.args, " "), d.log)
	stopStart := time.Now()
	d.stop(t, 90*time.Second)
	t.Logf("dockerd exited after %s", time.Since(stopStart).Round(time.Millisecond))

	// Without Docker, berth stays up and says it is not ready.
	waitFor(t, 20*time.Second, "/readyz 503 while dockerd is down", func() (bool, string) {
		code, body := httpGet(b.URL("/readyz"))
		return code == http.StatusServiceUnavailable, fmt.Sprintf("%d %s", code, body)
	})
	if code, body := httpGet(b.URL("/healthz")); code != http.StatusOK || !berthAlive(b) {
		t.Fatalf("berth without dockerd: alive %v, /healthz %d %s", berthAlive(b), code, body)
	}

	if err := d.start(); err != nil {
		t.Fatalf("start dockerd: %v", err)
	}
	if err := dockerAnswers(90 * time.Second); err != nil {
		t.Fatalf("dockerd does not answer after its restart: %v", err)
	}
	t.Logf("dockerd %d answers %s after the SIGTERM", d.pid, time.Since(stopStart).Round(time.Millisecond))

	waitFor(t, 30*time.Second, "berth_docker_event_stream_restarts_total to increase", func() (bool, string) {
		m, err := b.Metrics()
		if err != nil {
			return false, err.Error()
		}
		v, _ := metricValue(m, "berth_docker_event_stream_restarts_total")
		return v > restarts0, fmt.Sprintf("%v (was %v)", v, restarts0)
	})

	// The new stream delivers events: a container killed now is seen as it
	// dies (berth_docker_events_total{action="die"}), not only at a resync.
	ids := waitPodRunning(t, b.Node, "fault1", "app")
	dies0, _ := metricValueOf(b, `berth_docker_events_total{action="die"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cli().ContainerKill(ctx, ids["app"], "SIGKILL"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 4*time.Second, "the die event of a killed container (the event stream is live)", func() (bool, string) {
		v, _ := metricValueOf(b, `berth_docker_events_total{action="die"}`)
		return v > dies0, fmt.Sprintf("%v (was %v)", v, dies0)
	})

	faultCheck(t, b, want, foreign, checkOpts{stable: 6 * time.Second})

	// Every pod was repaired with new containers (dockerd stopped the old,
	// unless live-restore kept them running).
	info, err := cli().Info(context.Background())
	if err != nil || info.LiveRestoreEnabled {
		return
	}
	for pod, ids := range before {
		for name, id := range ids {
			if c, err := cli().ContainerInspect(context.Background(), id); err == nil && c.State.Running {
				t.Errorf("pod %s: %s %s still the running instance after the restart?", pod, name, id[:12])
			}
		}
	}
}

// ---------------------------------------------------------------- kill -9

// 2. berth is killed -9 while it creates the containers of 20 new pods (at a
// third of them), and again after its restart (at two thirds); after the
// second restart every pod converges without duplicates or leftovers.
func TestFaultKillDuringReconcile(t *testing.T) {
	b := startBerth(t, Options{})
	const n = 20
	foreign := faultForeign(t, b.Node, "kill00")
	want := map[string]wantPod{}
	// All manifests are written to hidden names first, then renamed in one
	// go, so that the source reports them in one scan.
	var tmps []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("kill%02d", i)
		want[name] = wantPod{apps: []string{"app"}, env: map[string]string{"app": "VERSION=v1"}}
		tmp := filepath.Join(b.Pods, "."+name+".tmp")
		if err := os.WriteFile(tmp, []byte(appPod(name, "v1")), 0o644); err != nil {
			t.Fatal(err)
		}
		tmps = append(tmps, tmp)
	}
	for i, tmp := range tmps {
		if err := os.Rename(tmp, filepath.Join(b.Pods, fmt.Sprintf("kill%02d.yaml", i))); err != nil {
			t.Fatal(err)
		}
	}
	total := 2 * n
	start := time.Now()
	deadline := start.Add(waitLong)
	var list []container.Summary
	for {
		list = listContainers(t, map[string]string{runtime.LabelNode: b.Node})
		if len(list) >= total/3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d containers after %s", len(list), total, waitLong)
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Kill(t)
	killed := time.Since(start)
	after := listContainers(t, map[string]string{runtime.LabelNode: b.Node})
	t.Logf("killed berth %s after the manifests appeared, at %d of %d containers (%s); after the kill: %d containers (%s)",
		killed.Round(time.Millisecond), len(list), total, stateCounts(list), len(after), stateCounts(after))
	if len(after) >= total && allRunningList(after) {
		t.Logf("note: berth finished every pod before the kill landed; the restart only adopts")
	}

	// Restart, and kill -9 once more while the restarted berth adopts and
	// completes the pods (at two thirds of the containers).
	b.Start(t)
	for {
		list = listContainers(t, map[string]string{runtime.LabelNode: b.Node})
		if len(list) >= 2*total/3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Kill(t)
	t.Logf("killed the restarted berth at %d of %d containers (%s)", len(list), total, stateCounts(list))

	b.Start(t)
	faultCheck(t, b, want, foreign, checkOpts{noExited: true, foreignRunning: true})
}

func stateCounts(list []container.Summary) string {
	m := map[string]int{}
	for _, c := range list {
		m[c.State]++
	}
	var parts []string
	for s, n := range m {
		parts = append(parts, fmt.Sprintf("%s=%d", s, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func allRunningList(list []container.Summary) bool {
	for _, c := range list {
		if c.State != "running" {
			return false
		}
	}
	return true
}

// ---------------------------------------------------------------- flood

// floodFile is the model of one pod name in the manifest directory.
type floodFile struct {
	kind    int    // floodAbsent, floodFile, floodLink
	version string // VERSION of the manifest name.yaml shows
	bak     string // version of name.yaml.bak (renamed away), "" for none
}

const (
	floodAbsent = iota
	floodRegular
	floodLink
)

// flood applies random operations to a manifest directory and keeps a model
// of what each name.yaml declares.
type flood struct {
	t       *testing.T
	dir     string
	rnd     *rand.Rand
	files   map[string]*floodFile
	names   []string
	dataDir string // current "..<ts>" target of "..data", "" before the first swap
	swaps   int
	counts  map[string]int
}

func (f *flood) path(name string) string { return filepath.Join(f.dir, name+".yaml") }

func (f *flood) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// op applies operation i.
func (f *flood) op(i int) {
	name := f.names[f.rnd.Intn(len(f.names))]
	st := f.files[name]
	version := "v" + strconv.Itoa(i)
	switch r := f.rnd.Intn(100); {
	case r < 30: // atomic write: a temp file renamed over name.yaml
		f.counts["rename-over"]++
		tmp := filepath.Join(f.dir, name+".yaml."+strconv.Itoa(i)+".tmp") // ignored name
		f.must(os.WriteFile(tmp, []byte(appPod(name, version)), 0o644))
		f.must(os.Rename(tmp, f.path(name)))
		st.kind, st.version = floodRegular, version
	case r < 40: // write in place (through the symlink when there is one)
		f.counts["write-in-place"]++
		f.must(os.WriteFile(f.path(name), []byte(appPod(name, version)), 0o644))
		if st.kind == floodAbsent {
			st.kind = floodRegular
		}
		st.version = version
	case r < 55: // delete
		f.counts["delete"]++
		if st.kind != floodAbsent {
			f.must(os.Remove(f.path(name)))
			st.kind, st.version = floodAbsent, ""
		}
	case r < 65: // rename away to an ignored name, or back
		switch {
		case st.kind == floodRegular && st.bak == "":
			f.counts["rename-away"]++
			f.must(os.Rename(f.path(name), f.path(name)+".bak"))
			st.kind, st.bak, st.version = floodAbsent, st.version, ""
		case st.kind != floodLink && st.bak != "":
			f.counts["rename-back"]++
			f.must(os.Rename(f.path(name)+".bak", f.path(name)))
			st.kind, st.version, st.bak = floodRegular, st.bak, ""
		}
	default: // Kubernetes-style atomic swap of "..data"
		f.counts["symlink-swap"]++
		f.swap(i)
	}
}

// swap writes a new "..<ts>" directory holding every linked name plus 1 to
// 3 names (re)declared with new versions, points "..data" at it with an
// atomic rename, links the new names (name.yaml -> ..data/name.yaml), and
// removes the previous directory, as Kubernetes' AtomicWriter does.
func (f *flood) swap(i int) {
	f.swaps++
	changed := map[string]string{}
	for k := f.rnd.Intn(3) + 1; k > 0; k-- {
		changed[f.names[f.rnd.Intn(len(f.names))]] = "v" + strconv.Itoa(i)
	}
	ts := fmt.Sprintf("..%s_%04d", time.Now().UTC().Format("2006_01_02_15_04_05.000000000"), f.swaps)
	f.must(os.Mkdir(filepath.Join(f.dir, ts), 0o755))
	for _, name := range f.names {
		v, ok := changed[name]
		if !ok && f.files[name].kind == floodLink {
			v = f.files[name].version
		}
		if v != "" {
			f.must(os.WriteFile(filepath.Join(f.dir, ts, name+".yaml"), []byte(appPod(name, v)), 0o644))
		}
	}
	tmp := filepath.Join(f.dir, "..data_tmp")
	f.must(os.Symlink(ts, tmp))
	f.must(os.Rename(tmp, filepath.Join(f.dir, "..data")))
	for name, v := range changed {
		st := f.files[name]
		if st.kind != floodLink {
			link := filepath.Join(f.dir, "."+name+".yaml.link")
			f.must(os.Symlink(filepath.Join("..data", name+".yaml"), link))
			f.must(os.Rename(link, f.path(name)))
		}
		st.kind, st.version = floodLink, v
	}
	if f.dataDir != "" {
		f.must(os.RemoveAll(filepath.Join(f.dir, f.dataDir)))
	}
	f.dataDir = ts
}

// 3. 1 000 operations on the manifest directory — writes, renames over
// existing files, deletes, renames to ignored names and back, and
// Kubernetes-style "..data" symlink swaps — across 10 pod names; berth ends
// with exactly the final state: the right pods, each with the right VERSION.
func TestFaultManifestFlood(t *testing.T) {
	b := startBerth(t, Options{})
	foreign := faultForeign(t, b.Node, "flood0")
	seed := time.Now().UnixNano()
	if s := os.Getenv("E2E_FLOOD_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (E2E_FLOOD_SEED to replay)", seed)
	f := &flood{t: t, dir: b.Pods, rnd: rand.New(rand.NewSource(seed)), files: map[string]*floodFile{}, counts: map[string]int{}}
	for i := 0; i < 10; i++ {
		name := fmt.Sprintf("flood%d", i)
		f.names = append(f.names, name)
		f.files[name] = &floodFile{}
	}
	start := time.Now()
	for i := 0; i < 1000; i++ {
		f.op(i)
		// Bursts and pauses, so that berth scans (and reconciles) many
		// intermediate states: about 4 s in all.
		if i%50 == 49 {
			time.Sleep(time.Duration(f.rnd.Intn(300)) * time.Millisecond)
		} else if f.rnd.Intn(4) == 0 {
			time.Sleep(time.Duration(f.rnd.Intn(8)) * time.Millisecond)
		}
	}
	want := map[string]wantPod{}
	var final []string
	for _, name := range f.names {
		st := f.files[name]
		kinds := []string{"absent", "file", "link"}
		final = append(final, fmt.Sprintf("%s=%s:%s", name, kinds[st.kind], st.version))
		if st.kind != floodAbsent {
			want[name] = wantPod{apps: []string{"app"}, env: map[string]string{"app": "VERSION=" + st.version}}
		}
	}
	t.Logf("1000 operations in %s (%v); final state: %s", time.Since(start).Round(time.Millisecond), f.counts, strings.Join(final, " "))
	if len(want) == 0 {
		// An empty final state checks less; declare one pod more.
		writeFile(t, b.Pods, "flood0.yaml", appPod("flood0", "final"))
		want["flood0"] = wantPod{apps: []string{"app"}, env: map[string]string{"app": "VERSION=final"}}
	}
	faultCheck(t, b, want, foreign, checkOpts{foreignRunning: true})
	if n, _ := metricValueOf(b, `berth_manifest_errors_total{source="file"}`); n > 0 {
		t.Logf("berth_manifest_errors_total{source=\"file\"} = %v (files caught mid-write)", n)
	}
}

func metricValueOf(b *Berth, series string) (float64, bool) {
	m, err := b.Metrics()
	if err != nil {
		return 0, false
	}
	return metricValue(m, series)
}

// ---------------------------------------------------------------- hostile

// 4. Hostile manifests next to a good pod: berth keeps running the good pod,
// reports every bad file (log and berth_manifest_errors_total), stays within
// a sane memory size, and a one-line manifest of exactly 4096 bytes (which
// used to be read as empty) runs.
func TestFaultHostileManifests(t *testing.T) {
	b := startBerth(t, Options{})
	foreign := faultForeign(t, b.Node, "good")
	writeFile(t, b.Pods, "good.yaml", appPod("good", "v1"))
	good := waitPodRunning(t, b.Node, "good", "app")

	rnd := rand.New(rand.NewSource(1))
	garbage := make([]byte, 1<<20)
	rnd.Read(garbage)
	head := "{apiVersion: v1, kind: Pod, metadata: {name: flow, annotations: {pad: '"
	tail := "'}}, spec: {terminationGracePeriodSeconds: 2, containers: [{name: app, image: '" + testImage + "', args: [sleep]}]}}"
	flow := head + strings.Repeat("x", 4096-len(head)-len(tail)) + tail
	hostile := map[string]string{
		"truncated.yaml": appPod("truncated", "v1")[:60],
		"big.yaml":       appPod("big", "v1") + "# " + strings.Repeat("x", 10<<20) + "\n",
		"garbage.yaml":   string(garbage),
		"nul.yaml":       string(make([]byte, 8192)),
		"utf8.yaml":      strings.Replace(appPod("utf", "v1"), "sleep", "sl\xff\xfeep\xc3", 1),
		"nested.yaml":    strings.Repeat("[", 100000),
		"mapping.yaml":   strings.Repeat("{a: ", 100000) + "1" + strings.Repeat("}", 100000),
		"bomb.yaml":      testutil.BillionLaughs,
		"docs.yaml":      strings.Repeat("---\na: 1\n", 1<<20), // 9 MiB, a million documents
	}
	for name, data := range hostile {
		writeFile(t, b.Pods, name, data)
	}
	writeFile(t, b.Pods, "flow.yaml", flow)
	flowIDs := waitPodRunning(t, b.Node, "flow", "app")

	for name := range hostile {
		logLine(t, b, "manifest rejected", name)
	}
	metricAtLeast(t, b, `berth_manifest_errors_total{source="file"}`, float64(len(hostile)))
	// Across a few rescans (1 s here), the good pods are untouched.
	assertStable(t, b.Node, "good", good, 3*time.Second)
	for _, name := range []string{"truncated", "big", "utf"} {
		if list := podContainers(t, b.Node, name); len(list) != 0 {
			t.Errorf("rejected pod %s has containers %s", name, describe(list))
		}
	}

	// A running pod's file replaced by an alias bomb: the pod keeps its
	// last good spec (the whole file failed).
	writeFile(t, b.Pods, "good.yaml", testutil.BillionLaughs)
	logLine(t, b, "good.yaml", "YAML aliases expand this document")
	assertStable(t, b.Node, "good", good, 2500*time.Millisecond)
	writeFile(t, b.Pods, "good.yaml", appPod("good", "v1"))

	if v, ok := metricValueOf(b, "process_resident_memory_bytes"); ok {
		t.Logf("berth RSS %d MiB", int64(v)>>20)
		if v > 1<<30 {
			t.Errorf("berth RSS %d MiB after the hostile manifests", int64(v)>>20)
		}
	}
	faultCheck(t, b, map[string]wantPod{
		"good": {apps: []string{"app"}, env: map[string]string{"app": "VERSION=v1"}},
		"flow": {apps: []string{"app"}},
	}, foreign, checkOpts{noExited: true, foreignRunning: true})
	assertStable(t, b.Node, "flow", flowIDs, 0)
}
