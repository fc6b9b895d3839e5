package runtime

// These tests run against the real Docker engine (DOCKER_HOST or the default
// socket). They fail when the engine is unreachable; `go test -short` skips
// them.

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/model"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/go-connections/nat"
)

const testImage = "berth/testapp:1"

// labelTestRun marks every container of one test run (for the final sweep),
// including those deliberately created without the node label.
const labelTestRun = "io.berth.test.run"

var (
	testRun = "test-" + randHex(6)

	setupOnce   sync.Once
	setupDocker *Docker
	setupErr    error
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if setupDocker != nil {
		sweep(setupDocker)
		setupDocker.Close()
	}
	os.Exit(code)
}

// sweep removes every container of this test run that a test left behind.
func sweep(d *Docker) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := d.cli.ContainerList(ctx, container.ListOptions{
		All: true, Filters: filters.NewArgs(filters.Arg("label", labelTestRun+"="+testRun)),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "sweep:", err)
		return
	}
	for _, c := range list {
		fmt.Fprintln(os.Stderr, "sweep: removing leftover container", c.ID)
		if err := d.RemoveContainer(ctx, c.ID); err != nil {
			fmt.Fprintln(os.Stderr, "sweep:", err)
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

// testDocker returns the shared engine client, after building the testapp
// image once per run.
func testDocker(t *testing.T) *Docker {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a Docker engine; skipped in -short mode")
	}
	setupOnce.Do(func() { setupDocker, setupErr = setup() })
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return setupDocker
}

func setup() (*Docker, error) {
	d, err := NewDocker("")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
	defer pcancel()
	if err := d.Ping(pctx); err != nil {
		d.Close()
		return nil, fmt.Errorf("Docker engine unreachable (is dockerd running?): %w", err)
	}
	dir, err := os.MkdirTemp("", "berth-runtime-test-")
	if err != nil {
		return d, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "testapp")
	if err := testutil.BuildStatic(ctx, "./test/testapp", bin); err != nil {
		return d, err
	}
	if err := d.BuildImage(ctx, testImage, bin, "/testapp", []string{"/testapp"}); err != nil {
		return d, err
	}
	// The built image names the binary it holds.
	want, err := FileDigest(bin)
	if err != nil {
		return d, err
	}
	if info, err := d.InspectImage(ctx, testImage); err != nil || info.Labels[LabelImageBinary] != want {
		return d, fmt.Errorf("built image label %s = %q (%v), want the binary's %s", LabelImageBinary, info.Labels[LabelImageBinary], err, want)
	}
	return d, nil
}

// uniquePod returns a pod name unique to this test and run.
func uniquePod(t *testing.T) string {
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	return name + "-" + randHex(3)
}

// testLabels returns the labels berth would put on container name of pod.
func testLabels(pod, name string) map[string]string {
	return map[string]string{
		LabelManaged:       "true",
		LabelNode:          testRun,
		LabelPodNamespace:  "default",
		LabelPodName:       pod,
		LabelPodUID:        "uid-" + pod,
		LabelContainerName: name,
		LabelContainerHash: "hash-" + name,
		LabelSource:        "test",
		LabelAttempt:       "1",
		LabelRestartCount:  "2",
		labelTestRun:       testRun,
	}
}

func containerName(pod, name string) string {
	return "berth-test_" + name + "_" + pod + "_" + testRun
}

// create creates a container and removes it when the test ends.
func create(t *testing.T, d *Docker, cfg *ContainerConfig) string {
	t.Helper()
	if cfg.Image == "" {
		cfg.Image = testImage
	}
	id, err := d.CreateContainer(t.Context(), cfg)
	if err != nil {
		t.Fatalf("CreateContainer %s: %v", cfg.Name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := d.RemoveContainer(ctx, id); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return id
}

func start(t *testing.T, d *Docker, id string) {
	t.Helper()
	if err := d.StartContainer(t.Context(), id); err != nil {
		t.Fatal(err)
	}
}

func freePort(t *testing.T) int { return testutil.FreePort(t) }

// httpGet retries GET url until it answers 200 or 15 s pass.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(15 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		resp, err := c.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return string(body)
			}
			last = fmt.Sprintf("status %d: %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("GET %s: %s", url, last)
	return ""
}

// waitState polls until container id is in state.
// runSleeper creates and starts container name of pod running testapp
// sleep, and returns it once the engine reports it running.
func runSleeper(t *testing.T, d *Docker, pod, name string) (string, *model.Container) {
	t.Helper()
	id := create(t, d, &ContainerConfig{Name: containerName(pod, name), Cmd: []string{"sleep"}, Labels: testLabels(pod, name)})
	start(t, d, id)
	return id, waitState(t, d, id, model.StateRunning)
}

func waitState(t *testing.T, d *Docker, id, state string) *model.Container {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := d.InspectContainer(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if c.State == state {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("container %s: state %q, want %q", id, c.State, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitLogLine follows the logs of container id until a line is want.
func waitLogLine(t *testing.T, d *Docker, id, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	rc, err := d.Logs(ctx, id, LogOptions{Follow: true, TailLines: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var seen []string
	for sc := bufio.NewScanner(rc); sc.Scan(); {
		if sc.Text() == want {
			return
		}
		seen = append(seen, sc.Text())
	}
	t.Fatalf("container %s: no log line %q within 20 s; seen %q", id, want, seen)
}

func TestDockerImages(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	ctx := t.Context()
	ok, err := d.ImagePresent(ctx, testImage)
	if err != nil || !ok {
		t.Fatalf("ImagePresent(%s) = %v, %v; want true", testImage, ok, err)
	}
	absent := "berth/absent-" + randHex(4) + ":1"
	if ok, err := d.ImagePresent(ctx, absent); err != nil || ok {
		t.Fatalf("ImagePresent(%s) = %v, %v; want false, nil", absent, ok, err)
	}
	img, err := d.cli.ImageInspect(ctx, testImage)
	if err != nil {
		t.Fatal(err)
	}
	if img.Config == nil || img.Config.Labels[labelImage] != "true" {
		t.Errorf("image labels = %v, want %s=true", img.Config, labelImage)
	}
	if got := strings.Join(img.Config.Entrypoint, " "); got != "/testapp" {
		t.Errorf("image entrypoint = %q", got)
	}
}

func TestDockerBuildImageErrors(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	if err := d.BuildImage(t.Context(), "berth/bad:1", "/nonexistent/binary", "/x", nil); err == nil {
		t.Error("BuildImage of a missing binary succeeded")
	}
	if err := d.BuildImage(t.Context(), "berth/bad:1", "/bin/sh", "relative", nil); err == nil {
		t.Error("BuildImage with a relative path succeeded")
	}
}

func TestDockerfile(t *testing.T) {
	df, err := dockerfile("/usr/bin/berth", []string{"/usr/bin/berth", "pause"}, "abc")
	if err != nil {
		t.Fatal(err)
	}
	want := "FROM scratch\nCOPY [\"payload\",\"/usr/bin/berth\"]\nENTRYPOINT [\"/usr/bin/berth\",\"pause\"]\nLABEL io.berth.image=true io.berth.binary-sha256=abc\n"
	if df != want {
		t.Errorf("dockerfile =\n%s\nwant\n%s", df, want)
	}
}

func TestGraceSeconds(t *testing.T) {
	for _, tc := range []struct {
		in   time.Duration
		want int
	}{{-time.Second, 0}, {0, 0}, {time.Millisecond, 1}, {1500 * time.Millisecond, 2}, {30 * time.Second, 30}} {
		if got := graceSeconds(tc.in); got != tc.want {
			t.Errorf("graceSeconds(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestDockerPodNetwork(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	ctx := t.Context()
	pod := uniquePod(t)
	hp1, hp2 := freePort(t), freePort(t)
	dataDir := t.TempDir()
	stop := 5

	sandbox := create(t, d, &ContainerConfig{
		Name:     containerName(pod, "POD"),
		Cmd:      []string{"serve"},
		Env:      []string{"PORT=8080", "MESSAGE=from-first"},
		Labels:   testLabels(pod, model.SandboxName),
		Hostname: "berth-host",
		Ports: []PortBinding{
			{ContainerPort: 8080, Protocol: "TCP", HostIP: "127.0.0.1", HostPort: hp1},
			{ContainerPort: 8081, Protocol: "tcp", HostIP: "127.0.0.1", HostPort: hp2},
			{ContainerPort: 9090, Protocol: "udp"},
		},
		Mounts: []Mount{
			{Source: dataDir, Target: "/data", ReadOnly: true},
			{Target: "/scratch", Tmpfs: true},
		},
		Resources: Resources{
			CPUShares: 512, CPUQuota: 50000, CPUPeriod: 100000,
			Memory: 64 << 20, MemorySwap: 64 << 20,
		},
		Domainname:     "sub.default.svc.cluster.local",
		IpcMode:        "shareable",
		GroupAdd:       []string{"1234"},
		SecurityOpt:    []string{"no-new-privileges:true"},
		Sysctls:        map[string]string{"net.ipv4.ping_group_range": "0 2147483647"},
		DNS:            []string{"192.0.2.53"},
		DNSSearch:      []string{"example.test"},
		DNSOptions:     []string{"ndots:2"},
		ExtraHosts:     []string{"alias.test:192.0.2.9"},
		OomScoreAdj:    500,
		StopSignal:     "SIGINT",
		CapDrop:        []string{"NET_RAW"},
		ReadonlyRootfs: true,
		WorkingDir:     "/",
		StopTimeout:    &stop,
	})
	start(t, d, sandbox)
	if got := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/", hp1)); got != "from-first" {
		t.Errorf("GET / = %q, want from-first", got)
	}

	app := create(t, d, &ContainerConfig{
		Name:        containerName(pod, "app"),
		Entrypoint:  []string{"/testapp"},
		Cmd:         []string{"serve"},
		Env:         []string{"PORT=8081", "FOO=bar"},
		Labels:      testLabels(pod, "app"),
		Hostname:    "dropped", // the engine rejects it in container: mode
		NetworkMode: "container:" + sandbox,
		Ports:       []PortBinding{{ContainerPort: 8081}}, // exposed only: dropped as well
	})
	start(t, d, app)
	base2 := fmt.Sprintf("http://127.0.0.1:%d", hp2)
	if got := httpGet(t, base2+"/get?url=http://127.0.0.1:8080/"); got != "from-first" {
		t.Errorf("app → sandbox over localhost = %q, want from-first", got)
	}
	if got := httpGet(t, base2+"/env?name=FOO"); got != "bar" {
		t.Errorf("env FOO = %q, want bar", got)
	}

	c, err := d.InspectContainer(ctx, sandbox)
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != sandbox || c.DockerName != containerName(pod, "POD") {
		t.Errorf("ID/DockerName = %s/%s", c.ID, c.DockerName)
	}
	if c.State != model.StateRunning || !c.Running() || c.ExitCode != 0 || c.Error != "" {
		t.Errorf("state = %q exit %d error %q", c.State, c.ExitCode, c.Error)
	}
	if c.PodKey != "default/"+pod || c.PodUID != "uid-"+pod || c.Name != model.SandboxName ||
		c.Hash != "hash-POD" || c.Source != "test" || c.Attempt != 1 || c.RestartCount != 2 {
		t.Errorf("label fields = %+v", c)
	}
	if c.Labels[LabelNode] != testRun {
		t.Errorf("labels = %v", c.Labels)
	}
	if c.Image != testImage || !strings.HasPrefix(c.ImageID, "sha256:") {
		t.Errorf("image = %q id %q", c.Image, c.ImageID)
	}
	now := time.Now()
	if c.CreatedAt.IsZero() || c.StartedAt.IsZero() || c.StartedAt.Before(c.CreatedAt) ||
		c.StartedAt.After(now.Add(time.Minute)) || !c.FinishedAt.IsZero() {
		t.Errorf("times created %v started %v finished %v", c.CreatedAt, c.StartedAt, c.FinishedAt)
	}

	raw, err := d.cli.ContainerInspect(ctx, sandbox)
	if err != nil {
		t.Fatal(err)
	}
	hc := raw.HostConfig
	if hc.RestartPolicy.Name != container.RestartPolicyDisabled {
		t.Errorf("restart policy = %q", hc.RestartPolicy.Name)
	}
	if b := hc.PortBindings[nat.Port("8080/tcp")]; len(b) != 1 || b[0].HostIP != "127.0.0.1" || b[0].HostPort != strconv.Itoa(hp1) {
		t.Errorf("port bindings = %v", hc.PortBindings)
	}
	if _, ok := hc.PortBindings[nat.Port("9090/udp")]; ok {
		t.Errorf("9090/udp published: %v", hc.PortBindings)
	}
	if _, ok := raw.Config.ExposedPorts[nat.Port("9090/udp")]; !ok {
		t.Errorf("9090/udp not exposed: %v", raw.Config.ExposedPorts)
	}
	r := hc.Resources
	if r.CPUShares != 512 || r.CPUQuota != 50000 || r.CPUPeriod != 100000 || r.Memory != 64<<20 || r.MemorySwap != 64<<20 || r.MemoryReservation != 0 {
		t.Errorf("resources = %+v", r)
	}
	if raw.Config.Domainname != "sub.default.svc.cluster.local" || hc.IpcMode != "shareable" || !slices.Equal(hc.GroupAdd, []string{"1234"}) ||
		!slices.Equal(hc.SecurityOpt, []string{"no-new-privileges:true"}) || hc.Sysctls["net.ipv4.ping_group_range"] != "0 2147483647" ||
		!slices.Equal(hc.DNS, []string{"192.0.2.53"}) || !slices.Equal(hc.DNSSearch, []string{"example.test"}) ||
		!slices.Equal(hc.DNSOptions, []string{"ndots:2"}) || !slices.Equal(hc.ExtraHosts, []string{"alias.test:192.0.2.9"}) ||
		hc.OomScoreAdj != 500 || raw.Config.StopSignal != "SIGINT" {
		t.Errorf("pod-level settings: domain %q ipc %q groups %v secopt %v sysctls %v dns %v %v %v hosts %v oom %d stopsignal %q",
			raw.Config.Domainname, hc.IpcMode, hc.GroupAdd, hc.SecurityOpt, hc.Sysctls, hc.DNS, hc.DNSSearch, hc.DNSOptions, hc.ExtraHosts, hc.OomScoreAdj, raw.Config.StopSignal)
	}
	if len(hc.CapDrop) != 1 || strings.TrimPrefix(hc.CapDrop[0], "CAP_") != "NET_RAW" || !hc.ReadonlyRootfs || hc.Privileged {
		t.Errorf("security: capdrop %v readonly %v privileged %v", hc.CapDrop, hc.ReadonlyRootfs, hc.Privileged)
	}
	if raw.Config.Hostname != "berth-host" || raw.Config.StopTimeout == nil || *raw.Config.StopTimeout != 5 {
		t.Errorf("hostname %q stop timeout %v", raw.Config.Hostname, raw.Config.StopTimeout)
	}
	var bind, tmpfs bool
	for _, m := range raw.Mounts {
		switch {
		case m.Type == mount.TypeBind && m.Source == dataDir && m.Destination == "/data" && !m.RW:
			bind = true
		case m.Type == mount.TypeTmpfs && m.Destination == "/scratch" && m.RW:
			tmpfs = true
		}
	}
	if !bind || !tmpfs {
		t.Errorf("mounts = %+v", raw.Mounts)
	}

	rawApp, err := d.cli.ContainerInspect(ctx, app)
	if err != nil {
		t.Fatal(err)
	}
	if string(rawApp.HostConfig.NetworkMode) != "container:"+sandbox {
		t.Errorf("app network mode = %q", rawApp.HostConfig.NetworkMode)
	}
	if got := strings.Join(rawApp.Config.Entrypoint, " ") + " | " + strings.Join(rawApp.Config.Cmd, " "); got != "/testapp | serve" {
		t.Errorf("app entrypoint | cmd = %q", got)
	}
}

func TestDockerListContainers(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	ctx := t.Context()
	pod := uniquePod(t)

	labelled := create(t, d, &ContainerConfig{
		Name: containerName(pod, "a"), Cmd: []string{"sleep"}, Labels: testLabels(pod, "a"),
	})
	other := testLabels(pod, "b")
	delete(other, LabelNode) // not this node's
	unlabelled := create(t, d, &ContainerConfig{
		Name: containerName(pod, "b"), Cmd: []string{"sleep"}, Labels: other,
	})

	list, err := d.ListContainers(ctx, map[string]string{LabelNode: testRun, LabelPodName: pod})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != labelled {
		t.Fatalf("ListContainers(node, pod) = %v, want only %s", ids(list), labelled)
	}
	c := list[0]
	if c.State != model.StateCreated || c.Name != "a" || c.PodKey != "default/"+pod ||
		c.DockerName != containerName(pod, "a") || !c.StartedAt.IsZero() || !c.FinishedAt.IsZero() || c.CreatedAt.IsZero() {
		t.Errorf("listed container = %+v", c)
	}

	list, err = d.ListContainers(ctx, map[string]string{LabelPodName: pod})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(list); len(got) != 2 || !contains(got, labelled) || !contains(got, unlabelled) {
		t.Errorf("ListContainers(pod) = %v, want %s and %s", got, labelled, unlabelled)
	}

	list, err = d.ListContainers(ctx, map[string]string{LabelNode: testRun, LabelPodName: pod, LabelContainerName: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		t.Errorf("ListContainers(node, pod, name=b) = %v, want none", ids(list))
	}
}

func ids(cs []*model.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestDockerEvents(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	pod := uniquePod(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	evs, errs := d.Events(ctx, map[string]string{LabelNode: testRun, LabelPodName: pod})

	// An unlabelled container goes through its whole life first; none of
	// its events may show up.
	otherLabels := testLabels(pod, "other")
	delete(otherLabels, LabelNode)
	other := create(t, d, &ContainerConfig{Name: containerName(pod, "other"), Cmd: []string{"exit", "0"}, Labels: otherLabels})
	start(t, d, other)
	waitState(t, d, other, model.StateExited)
	if err := d.RemoveContainer(t.Context(), other); err != nil {
		t.Fatal(err)
	}

	id := create(t, d, &ContainerConfig{Name: containerName(pod, "x"), Cmd: []string{"exit", "0"}, Labels: testLabels(pod, "x")})
	start(t, d, id)
	waitState(t, d, id, model.StateExited)
	if err := d.RemoveContainer(t.Context(), id); err != nil {
		t.Fatal(err)
	}

	var actions []string
	timeout := time.After(20 * time.Second)
	for done := false; !done; {
		select {
		case ev, ok := <-evs:
			if !ok {
				t.Fatalf("event channel closed early; actions %v; err %v", actions, <-errs)
			}
			if ev.ContainerID != id {
				t.Fatalf("event for unexpected container: %+v", ev)
			}
			if ev.Time.IsZero() || time.Since(ev.Time) > time.Minute || strings.Contains(ev.Action, ":") {
				t.Errorf("bad event %+v", ev)
			}
			actions = append(actions, ev.Action)
			done = ev.Action == "destroy"
		case err := <-errs:
			t.Fatalf("events error: %v", err)
		case <-timeout:
			t.Fatalf("timed out; actions so far %v", actions)
		}
	}
	want := []string{"create", "start", "die", "destroy"}
	i := 0
	for _, a := range actions {
		if i < len(want) && a == want[i] {
			i++
		}
	}
	if i != len(want) {
		t.Errorf("actions = %v, want in order %v", actions, want)
	}

	cancel()
	select {
	case _, ok := <-evs:
		if ok {
			// drain at most a few stragglers
			for range evs {
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatal("event channel not closed after cancel")
	}
	select {
	case err := <-errs:
		t.Errorf("error after cancel: %v", err)
	default:
	}
}

func TestDockerEventsStreamError(t *testing.T) {
	t.Parallel()
	testDocker(t) // honour -short like the others
	d, err := NewDocker("unix://" + filepath.Join(t.TempDir(), "absent.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	evs, errs := d.Events(t.Context(), nil)
	select {
	case err := <-errs:
		if err == nil {
			t.Fatal("nil error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no error from a broken stream")
	}
	select {
	case _, ok := <-evs:
		if ok {
			t.Fatal("event from a broken stream")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("event channel not closed")
	}
	if err := d.Ping(t.Context()); err == nil {
		t.Error("Ping of an absent engine succeeded")
	}
}

func TestDockerStopGrace(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	ctx := t.Context()
	pod := uniquePod(t)
	id, _ := runSleeper(t, d, pod, "s")
	// testapp writes this line just before installing its SIGTERM handler.
	waitLogLine(t, d, id, "testapp sleep stderr")
	t0 := time.Now()
	if err := d.StopContainer(ctx, id, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(t0); el > 5*time.Second {
		t.Errorf("stop took %v; SIGTERM should end it at once", el)
	}
	c, err := d.InspectContainer(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != model.StateExited || c.ExitCode != 0 || c.FinishedAt.IsZero() || c.Running() {
		t.Errorf("after stop: state %q exit %d finished %v", c.State, c.ExitCode, c.FinishedAt)
	}
	if err := d.StopContainer(ctx, id, time.Second); err != nil {
		t.Errorf("stopping a stopped container: %v", err)
	}
	if err := d.StopContainer(ctx, "berth-missing-"+randHex(6), time.Second); err != nil {
		t.Errorf("stopping a missing container: %v", err)
	}
}

func TestDockerExitCode(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	pod := uniquePod(t)
	id := create(t, d, &ContainerConfig{Name: containerName(pod, "e"), Cmd: []string{"exit", "3"}, Labels: testLabels(pod, "e")})
	c, err := d.InspectContainer(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != model.StateCreated || !c.StartedAt.IsZero() || !c.FinishedAt.IsZero() {
		t.Errorf("before start: state %q started %v finished %v", c.State, c.StartedAt, c.FinishedAt)
	}
	start(t, d, id)
	c = waitState(t, d, id, model.StateExited)
	// No ordering check between StartedAt and FinishedAt: for a process that
	// exits at once, Docker 20.10 may record FinishedAt slightly before
	// StartedAt.
	if c.ExitCode != 3 || c.OOMKilled || c.StartedAt.IsZero() || c.FinishedAt.IsZero() {
		t.Errorf("after exit: %+v", c)
	}
}

func TestDockerMissing(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	ctx := t.Context()
	missing := "berth-missing-" + randHex(6)
	if err := d.RemoveContainer(ctx, missing); err != nil {
		t.Errorf("RemoveContainer(missing) = %v", err)
	}
	if _, err := d.InspectContainer(ctx, missing); !errors.Is(err, ErrNotFound) {
		t.Errorf("InspectContainer(missing) = %v, want ErrNotFound", err)
	}
	if err := d.StartContainer(ctx, missing); !errors.Is(err, ErrNotFound) {
		t.Errorf("StartContainer(missing) = %v, want ErrNotFound", err)
	}
	pod := uniquePod(t)
	id := create(t, d, &ContainerConfig{Name: containerName(pod, "r"), Cmd: []string{"sleep"}, Labels: testLabels(pod, "r")})
	start(t, d, id)
	for i := 0; i < 2; i++ {
		if err := d.RemoveContainer(ctx, id); err != nil {
			t.Errorf("RemoveContainer #%d = %v", i+1, err)
		}
	}
	if _, err := d.InspectContainer(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Errorf("InspectContainer(removed) = %v, want ErrNotFound", err)
	}
}

func TestDockerNameConflict(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	pod := uniquePod(t)
	cfg := &ContainerConfig{Name: containerName(pod, "n"), Cmd: []string{"sleep"}, Labels: testLabels(pod, "n")}
	create(t, d, cfg)
	id, err := d.CreateContainer(t.Context(), cfg)
	if err == nil {
		d.RemoveContainer(context.Background(), id)
		t.Fatal("duplicate name accepted")
	}
	if !errors.Is(err, ErrNameConflict) {
		t.Errorf("duplicate name: %v, want ErrNameConflict", err)
	}
}

func TestDockerPullUnreachable(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	t0 := time.Now()
	err := d.PullImage(ctx, "registry.invalid/x:1", nil, nil)
	if err == nil {
		t.Fatal("pull from an unreachable registry succeeded")
	}
	if ctx.Err() != nil {
		t.Errorf("pull only failed by timeout (%v): %v", time.Since(t0), err)
	}
	if !strings.Contains(err.Error(), "registry.invalid/x:1") {
		t.Errorf("error does not name the image: %v", err)
	}
	t.Logf("pull failed after %v: %v", time.Since(t0).Round(time.Millisecond), err)
}

// Events carry what the informer needs without an inspect: the labels, the
// name, the image and the exit code.
func TestDockerEventsCarryState(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	pod := uniquePod(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	evs, errs := d.Events(ctx, map[string]string{LabelNode: testRun, LabelPodName: pod})
	name := containerName(pod, "x")
	id := create(t, d, &ContainerConfig{Name: name, Cmd: []string{"exit", "3"}, Labels: testLabels(pod, "x")})
	start(t, d, id)
	timeout := time.After(20 * time.Second)
	seen := map[string]Event{}
	for seen["die"].ContainerID == "" {
		select {
		case ev := <-evs:
			seen[ev.Action] = ev
		case err := <-errs:
			t.Fatalf("events error: %v", err)
		case <-timeout:
			t.Fatalf("timed out; seen %v", seen)
		}
	}
	for _, a := range []string{"create", "start", "die"} {
		ev := seen[a]
		if ev.Attributes[LabelPodName] != pod || ev.Attributes[LabelRestartCount] != "2" || ev.Attributes["name"] != name || ev.Attributes["image"] != testImage {
			t.Errorf("%s event attributes %v", a, ev.Attributes)
		}
	}
	if got := seen["die"].Attributes["exitCode"]; got != "3" {
		t.Errorf("die exitCode %q, want 3", got)
	}
	if !seen["create"].Time.Before(seen["start"].Time) || !seen["start"].Time.Before(seen["die"].Time) {
		t.Errorf("event times out of order: %v %v %v", seen["create"].Time, seen["start"].Time, seen["die"].Time)
	}
}

func TestDockerMissingImage(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	absent := "berth/absent-" + randHex(4) + ":1"
	if _, err := d.InspectImage(t.Context(), absent); !errors.Is(err, ErrImageNotFound) {
		t.Errorf("InspectImage(absent) = %v, want ErrImageNotFound", err)
	}
	if info, err := d.InspectImage(t.Context(), testImage); err != nil || !strings.HasPrefix(info.ID, "sha256:") {
		t.Errorf("InspectImage(%s) = %+v, %v", testImage, info, err)
	}
	pod := uniquePod(t)
	_, err := d.CreateContainer(t.Context(), &ContainerConfig{Name: containerName(pod, "x"), Image: absent, Labels: testLabels(pod, "x")})
	if !errors.Is(err, ErrImageNotFound) {
		t.Errorf("CreateContainer(absent image) = %v, want ErrImageNotFound", err)
	}
}

// TestVolumeSubpathNeedsItsAPI: an engine older than API 1.45 would mount
// the whole volume for a subpath; the create is refused instead.
func TestVolumeSubpathNeedsItsAPI(t *testing.T) {
	mounts := []Mount{{Volume: true, Source: "v", Target: "/d", Subpath: "a"}}
	if err := volumeSubpathSupported(mounts, "1.41"); err == nil || !strings.Contains(err.Error(), "needs Docker API 1.45") {
		t.Errorf("API 1.41: %v", err)
	}
	if err := volumeSubpathSupported(mounts, "1.45"); err != nil {
		t.Errorf("API 1.45: %v", err)
	}
	if err := volumeSubpathSupported([]Mount{{Volume: true, Source: "v", Target: "/d"}}, "1.41"); err != nil {
		t.Errorf("no subpath: %v", err)
	}
}
