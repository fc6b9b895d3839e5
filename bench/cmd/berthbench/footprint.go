package main

// Scenarios sandbox and footprint, measured on one set of idle pods per
// system: berth (a fresh process, default settings) runs -footprint-pods
// pods; after a settle time the bench reads the memory cgroup and the
// process memory of every sandbox and app container, the containerd-shim
// of every container and the docker-proxy of every published port, berth's
// own memory, and dockerd's and containerd's growth since before the pods.
// Then the same pods run by docker-compose (the start scenario's file,
// the sandbox service on the same pause image) are measured the same way.

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/berth-dev/berth/bench/internal/benchkit"
)

type footprintResults struct {
	pods       int
	settle     time.Duration
	pauseImage string
	pauseSize  int64 // bytes of the pause image
	systems    []*footprintSys
	composeErr string // why compose was not measured
}

// footprintSys is one system's idle pods, measured once.
type footprintSys struct {
	system    string
	startup   time.Duration
	sandboxes []containerMem
	apps      []containerMem
	agent     procMem // berth's own process; zero for compose
	shims     []procMem
	proxies   []procMem
	// engine processes before the pods and after the settle time
	dockerd0, dockerd1, containerd0, containerd1 procMem
}

type containerMem struct {
	id   string
	cg   cgroupMem
	proc procMem // the container's init process
}

func (r *footprintResults) system(name string) *footprintSys {
	for _, s := range r.systems {
		if s.system == name {
			return s
		}
	}
	return nil
}

func (b *bench) runFootprint(ctx context.Context, res *results) error {
	fr := &footprintResults{pods: b.opt.footprintPods, settle: b.opt.footprintSettle, pauseImage: b.pauseImage}
	res.footprint = fr
	if img, err := b.cli.ImageInspect(ctx, b.pauseImage); err == nil {
		fr.pauseSize = img.Size
	}
	err := b.repeat(ctx, res, "footprint berth", func() error {
		s, err := b.footprintBerth(ctx, fr.pods)
		if err == nil {
			fr.systems = append(fr.systems, s)
		}
		return err
	})
	if err != nil || ctx.Err() != nil {
		return err
	}
	if _, err := exec.LookPath(b.opt.compose); err != nil {
		fr.composeErr = fmt.Sprintf("%s not found (install Debian's docker-compose)", b.opt.compose)
		return nil
	}
	if err := benchkit.SleepCtx(ctx, 2*time.Second); err != nil {
		return err
	}
	return b.repeat(ctx, res, "footprint compose", func() error {
		s, err := b.footprintCompose(ctx, fr.pods)
		if err == nil {
			fr.systems = append(fr.systems, s)
		}
		return err
	})
}

func (b *bench) footprintBerth(ctx context.Context, n int) (*footprintSys, error) {
	fs := &footprintSys{system: sysBerth}
	bp, err := b.startBerth(ctx, b.node("fp"), nil)
	if err != nil {
		return nil, err
	}
	defer b.finishBerth(bp)
	if err := benchkit.SleepCtx(ctx, 2*time.Second); err != nil {
		return nil, err
	}
	fs.dockerd0, fs.containerd0 = engineMem()
	match := map[string]string{nodeLabel: bp.node}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := b.watch(wctx, time.Now(), match, "start")
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	for i := 0; i < n; i++ {
		if err := bp.writePod(bp.podName(i), podYAML(bp.podName(i), b.hostPort(i))); err != nil {
			return nil, err
		}
	}
	st, err := w.waitStarts(ctx, 2*n, 2*time.Minute+time.Duration(n)*time.Second)
	if err != nil {
		return nil, fmt.Errorf("%d pods: %w\n%s", n, err, bp.logTail())
	}
	fs.startup = st.lastStart.Sub(t0)
	logf("footprint: berth runs %d pods; settling %s", n, b.opt.footprintSettle)
	if err := benchkit.SleepCtx(ctx, b.opt.footprintSettle); err != nil {
		return nil, err
	}
	if fs.agent, err = readProcMem(bp.Pid()); err != nil {
		return nil, err
	}
	return fs, b.measureFootprint(ctx, fs, match, n)
}

func (b *bench) footprintCompose(ctx context.Context, n int) (*footprintSys, error) {
	fs := &footprintSys{system: sysCompose}
	c := &composeCycle{b: b, n: n, caseID: "footprint", project: "bb" + b.id + "fp"}
	defer c.cleanup()
	fs.dockerd0, fs.containerd0 = engineMem()
	match := map[string]string{labelRun: b.id, labelCase: c.caseID}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := b.watch(wctx, time.Now(), match, "start")
	if err != nil {
		return nil, err
	}
	t0, err := c.up(ctx)
	if err != nil {
		return nil, err
	}
	st, err := w.waitStarts(ctx, 2*n, 2*time.Minute+time.Duration(n)*time.Second)
	if err != nil {
		return nil, fmt.Errorf("%d pods: %w", n, err)
	}
	fs.startup = st.lastStart.Sub(t0)
	logf("footprint: docker-compose runs %d pods; settling %s", n, b.opt.footprintSettle)
	if err := benchkit.SleepCtx(ctx, b.opt.footprintSettle); err != nil {
		return nil, err
	}
	return fs, b.measureFootprint(ctx, fs, match, n)
}

// measureFootprint reads the memory of the containers carrying match (2n
// of them), their shims and port proxies, and of the engine.
func (b *bench) measureFootprint(ctx context.Context, fs *footprintSys, match map[string]string, n int) error {
	f := filters.NewArgs(filters.Arg("status", "running"))
	for k, v := range match {
		f.Add("label", k+"="+v)
	}
	list, err := b.cli.ContainerList(ctx, container.ListOptions{Filters: f})
	if err != nil {
		return err
	}
	if len(list) != 2*n {
		return fmt.Errorf("%d containers running, want %d", len(list), 2*n)
	}
	ids := map[string]bool{}
	for _, c := range list {
		ins, err := b.cli.ContainerInspect(ctx, c.ID)
		if err != nil {
			return err
		}
		cm := containerMem{id: c.ID}
		if cm.cg, err = readCgroupMem(ins.State.Pid); err != nil {
			return fmt.Errorf("container %s: %w", c.ID[:12], err)
		}
		if cm.proc, err = readProcMem(ins.State.Pid); err != nil {
			return fmt.Errorf("container %s: %w", c.ID[:12], err)
		}
		ids[c.ID] = true
		if c.Labels[labelRole] == "sandbox" || c.Labels[ctrLabel] == "POD" {
			fs.sandboxes = append(fs.sandboxes, cm)
		} else {
			fs.apps = append(fs.apps, cm)
		}
	}
	ports := map[string]bool{}
	for i := 0; i < n; i++ {
		ports[strconv.Itoa(b.hostPort(i))] = true
	}
	procs, err := processes()
	if err != nil {
		return err
	}
	for _, p := range procs {
		switch {
		case strings.HasPrefix(p.comm, "containerd-shim"):
			if ids[argValue(p.args, "-id")] {
				if m, err := readProcMem(p.pid); err == nil {
					fs.shims = append(fs.shims, m)
				}
			}
		case p.comm == "docker-proxy":
			if ports[argValue(p.args, "-host-port")] {
				if m, err := readProcMem(p.pid); err == nil {
					fs.proxies = append(fs.proxies, m)
				}
			}
		}
	}
	fs.dockerd1, fs.containerd1 = engineMem()
	logf("footprint %s: %d sandboxes, mean cgroup usage %.2f MiB; %d shims, %d docker-proxy",
		fs.system, len(fs.sandboxes), mib(meanOf(fs.sandboxes, func(c containerMem) int64 { return c.cg.usage })), len(fs.shims), len(fs.proxies))
	return nil
}

// engineMem is the memory of dockerd and of its containerd (a child of
// dockerd, or else the host's containerd).
func engineMem() (dockerd, containerd procMem) {
	procs, err := processes()
	if err != nil {
		return
	}
	dpid, cpid := 0, 0
	for _, p := range procs {
		if p.comm == "dockerd" {
			dpid = p.pid
		}
	}
	for _, p := range procs {
		if p.comm == "containerd" && (cpid == 0 || p.ppid == dpid) {
			cpid = p.pid
		}
	}
	if dpid > 0 {
		dockerd, _ = readProcMem(dpid)
	}
	if cpid > 0 {
		containerd, _ = readProcMem(cpid)
	}
	return
}

func meanOf(cs []containerMem, f func(containerMem) int64) float64 {
	if len(cs) == 0 {
		return 0
	}
	var s int64
	for _, c := range cs {
		s += f(c)
	}
	return float64(s) / float64(len(cs))
}

func sumProc(ps []procMem, f func(procMem) int64) int64 {
	var s int64
	for _, p := range ps {
		s += f(p)
	}
	return s
}

func mib(bytes float64) float64 { return bytes / (1 << 20) }
