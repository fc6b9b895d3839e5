package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/go-connections/nat"
)

func ev(id, action string, ms int, attrs map[string]string) events.Message {
	return events.Message{Action: events.Action(action), Actor: events.Actor{ID: id, Attributes: attrs},
		TimeNano: time.Unix(1000, 0).Add(time.Duration(ms) * time.Millisecond).UnixNano()}
}

// The teardown ends at the last destroy of the containers that started,
// and the app's stop is its kill → die; a sandbox's is not counted.
func TestTrackerTeardown(t *testing.T) {
	msgs := make(chan events.Message, 32)
	tr := &tracker{w: &watcher{msgs: msgs, errs: make(chan error)}, started: map[string]bool{}, sandbox: map[string]bool{},
		killed: map[string]time.Time{}, died: map[string]time.Time{}, exitCode: map[string]int{}, destroyed: map[string]bool{}}
	sb := map[string]string{ctrLabel: "POD"}
	app := map[string]string{ctrLabel: "app"}
	for _, m := range []events.Message{
		ev("s", "create", 0, sb), ev("s", "start", 10, sb), ev("a", "create", 20, app), ev("a", "start", 30, app),
		ev("a", "kill", 100, app), ev("a", "die", 140, map[string]string{ctrLabel: "app", "exitCode": "0"}), ev("a", "destroy", 150, app),
		ev("s", "kill", 160, sb), ev("s", "die", 400, map[string]string{ctrLabel: "POD", "exitCode": "137"}), ev("s", "destroy", 420, sb),
	} {
		msgs <- m
	}
	ctx := context.Background()
	if err := tr.waitStarted(ctx, 2, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := tr.waitDestroyed(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	if got := tr.lastStart.Sub(tr.firstCreate); got != 30*time.Millisecond {
		t.Errorf("first create → last start %s", got)
	}
	if got := tr.lastDestroy.Sub(time.Unix(1000, 0)); got != 420*time.Millisecond {
		t.Errorf("last destroy at %s", got)
	}
	stop, killed := tr.stopStats()
	if stop != 40*time.Millisecond || killed != 1 {
		t.Errorf("app stop %s, SIGKILLed %d; want 40ms, 1", stop, killed)
	}
	// Nothing more arrives: a wait for another start times out.
	if err := tr.waitStarted(ctx, 3, 20*time.Millisecond); err == nil {
		t.Error("waitStarted(3) returned without a third start")
	}
}

// Ratios pair the systems' runs of the same round, for the start and for
// the teardown, and a failed teardown leaves its round out.
func TestPairedRatioByRound(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	s := &startResults{runs: []startRun{
		{system: sysBerth, n: 10, run: 1, total: ms(110), down: downRun{total: ms(300)}},
		{system: sysMinimal, n: 10, run: 1, total: ms(100), down: downRun{total: ms(200)}},
		{system: sysBerth, n: 10, run: 2, total: ms(300), down: downRun{err: "timed out"}},
		{system: sysMinimal, n: 10, run: 2, total: ms(200), down: downRun{total: ms(200)}},
		{system: sysBerth, n: 10, run: 3, total: ms(130), down: downRun{total: ms(220)}},
		{system: sysMinimal, n: 10, run: 3, total: ms(100), down: downRun{total: ms(200)}},
	}}
	if r, k := s.pairedRatio(10, sysBerth, sysMinimal, false); k != 3 || r != 1.3 {
		t.Errorf("start ratio %.3f over %d rounds, want 1.3 over 3", r, k)
	}
	if r, k := s.pairedRatio(10, sysBerth, sysMinimal, true); k != 2 || r != 1.3 {
		t.Errorf("teardown ratio %.3f over %d rounds, want 1.3 (median of 1.5 and 1.1) over 2", r, k)
	}
	if got := len(s.durations(sysBerth, 10, true)); got != 2 {
		t.Errorf("%d berth teardowns, want 2", got)
	}
}

// A berth pod's specs cloned for another pod carry its name, UID, node,
// port, root dir and sandbox, and nothing of the template's.
func TestCloneBerthPod(t *testing.T) {
	tmplRoot := t.TempDir()
	oldUID, oldSB := "d3bbe552-9897-31ef-4243-d32800f654b2", "c36f251d6d4f"
	tlog := filepath.Join(tmplRoot, "pods", oldUID, "containers/app/0/termination-log")
	if err := os.MkdirAll(filepath.Dir(tlog), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tlog, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	port := nat.Port("8080/tcp")
	labels := func(extra ...string) map[string]string {
		m := map[string]string{nodeLabel: "bb-x-warm", podLabel: "x-warm-000", uidLabel: oldUID}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	tm := &podTemplate{podName: "x-warm-000", podUID: oldUID, node: "bb-x-warm", rootDir: tmplRoot, sandboxID: oldSB,
		fileMounts: map[string]bool{tlog: true},
		sandbox: containerSpec{
			Config:     &container.Config{Hostname: "x-warm-000", Labels: labels(ctrLabel, "POD"), ExposedPorts: nat.PortSet{port: {}}},
			HostConfig: &container.HostConfig{IpcMode: "shareable", PortBindings: nat.PortMap{port: {{HostPort: "20000"}}}},
		},
		app: containerSpec{
			Config: &container.Config{Labels: labels(ctrLabel, "app", "io.berth.sandbox.id", oldSB)},
			HostConfig: &container.HostConfig{NetworkMode: container.NetworkMode("container:" + oldSB), IpcMode: container.IpcMode("container:" + oldSB),
				Mounts: []mount.Mount{{Type: mount.TypeBind, Source: tlog, Target: "/dev/termination-log"}}},
		},
	}
	root := t.TempDir()
	cp, err := tm.clone("p007", "0000-uid", "bb-x-cfg", root, 20007, map[string]string{labelRun: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if cp.sandbox.Config.Hostname != "p007" || cp.sandbox.Config.Labels[podLabel] != "p007" || cp.sandbox.Config.Labels[nodeLabel] != "bb-x-cfg" ||
		cp.sandbox.Config.Labels[uidLabel] != "0000-uid" || cp.sandbox.Config.Labels[labelRole] != "sandbox" || cp.sandbox.Config.Labels[labelRun] != "x" {
		t.Errorf("sandbox config %+v", cp.sandbox.Config)
	}
	if hp := cp.sandbox.HostConfig.PortBindings[port][0].HostPort; hp != "20007" || cp.sandbox.HostConfig.IpcMode != "shareable" {
		t.Errorf("sandbox host port %s, ipc %s", hp, cp.sandbox.HostConfig.IpcMode)
	}
	if tm.sandbox.HostConfig.PortBindings[port][0].HostPort != "20000" {
		t.Error("the clone changed the template")
	}
	cfg, hc := cp.app.withSandbox("NEWSB")
	if cfg.Labels["io.berth.sandbox.id"] != "NEWSB" || hc.NetworkMode != "container:NEWSB" || hc.IpcMode != "container:NEWSB" || cfg.Labels[labelRole] != "app" {
		t.Errorf("app joined to %s / %s, labels %v", hc.NetworkMode, hc.IpcMode, cfg.Labels)
	}
	want := filepath.Join(root, "pods/0000-uid/containers/app/0/termination-log")
	if len(hc.Mounts) != 1 || hc.Mounts[0].Source != want || len(cp.files) != 1 || cp.files[0] != want {
		t.Fatalf("mounts %+v, files %v; want %s", hc.Mounts, cp.files, want)
	}
	if err := cp.makeMounts(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(want); err != nil || fi.Mode().Perm() != 0o666 || cp.podDir != filepath.Join(root, "pods/0000-uid") {
		t.Errorf("termination log %v %v, pod dir %s", fi, err, cp.podDir)
	}
}

func TestBenchMetric(t *testing.T) {
	out := "BenchmarkOneNodeLinear: 1000 pods one by one\nBenchmarkOneNodeLinear-2 \t 1\t 9 ns/op\t 1.13 last/first\t 2.5 cpu-ms/put-first\nPASS\n"
	if v, ok := benchMetric(out, "BenchmarkOneNodeLinear", "last/first"); !ok || v != 1.13 {
		t.Errorf("benchMetric = %v, %v", v, ok)
	}
	if _, ok := benchMetric(out, "BenchmarkOneNodeLinear", "nope"); ok {
		t.Error("found a metric that is not there")
	}
}
