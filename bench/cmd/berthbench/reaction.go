package main

// Scenario 2, reaction latency: an app container is killed (`docker kill`,
// i.e. POST /containers/{id}/kill with SIGKILL) or removed (`docker rm -f`)
// behind berth's back, and berth creates and starts a replacement. Each
// trial uses a different pod, so every restart is a first restart (which
// berth makes immediately, as the kubelet does) and backoff never applies.
// Alongside: Docker's own time to create+start one app container joined to a
// running sandbox, measured directly.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"

	"github.com/berth-dev/berth/bench/internal/benchkit"
	"github.com/berth-dev/berth/runtime"
)

type reactionTrial struct {
	callToGone  time.Duration // kill: call → "die"; rm: call → "destroy"
	goneToStart time.Duration // "die" (kill) or "destroy" (rm) → replacement "start"
	dieToStart  time.Duration // "die" → replacement "start"
	dieToCreate time.Duration // "die" → replacement "create"
	callToStart time.Duration // call → replacement "start"
}

type reactionResults struct {
	kill, rm   []reactionTrial
	dockerOnly []time.Duration // create+start call → "start" event
	dockerCall []time.Duration // duration of the create and start calls
}

func (b *bench) runReaction(ctx context.Context, res *results) error {
	return b.repeat(ctx, res, "reaction", func() error {
		res.reaction = &reactionResults{}
		return b.reaction(ctx, res.reaction)
	})
}

func (b *bench) reaction(ctx context.Context, rr *reactionResults) error {
	if err := b.dockerOnlyStarts(ctx, rr); err != nil {
		return fmt.Errorf("docker-only baseline: %w", err)
	}

	trials := b.opt.trials
	pods := 2 * trials
	bp, err := b.startBerth(ctx, b.node("react"), []string{"BERTH_BACKOFF_INITIAL=10ms", "BERTH_BACKOFF_MAX=100ms"})
	if err != nil {
		return err
	}
	defer b.finishBerth(bp)
	match := map[string]string{nodeLabel: bp.node}
	wctx, cancel := context.WithCancel(ctx)
	w, err := b.watch(wctx, time.Now(), match, "start")
	if err != nil {
		cancel()
		return err
	}
	for i := 0; i < pods; i++ {
		if err := bp.writePod(bp.podName(i), podYAML(bp.podName(i), b.hostPort(i))); err != nil {
			cancel()
			return err
		}
	}
	_, err = w.waitStarts(ctx, 2*pods, 2*time.Minute)
	cancel()
	if err != nil {
		return fmt.Errorf("%d pods: %w", pods, err)
	}
	if err := benchkit.SleepCtx(ctx, 2*time.Second); err != nil { // let berth settle
		return err
	}

	apps, err := b.appContainers(ctx, bp.node)
	if err != nil {
		return err
	}
	var errs []error
	for i := 0; i < pods; i++ {
		kind := "kill"
		if i >= trials {
			kind = "rm"
		}
		t, err := b.reactOnce(ctx, bp.node, bp.podName(i), apps[bp.podName(i)], kind)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s trial on %s: %w", kind, bp.podName(i), err))
			logf("reaction %-4s %s: FAILED: %v", kind, bp.podName(i), err)
		} else {
			logf("reaction %-4s %s: gone→start %6.1f ms, call→start %6.1f ms", kind, bp.podName(i), msf(t.goneToStart), msf(t.callToStart))
			if kind == "kill" {
				rr.kill = append(rr.kill, t)
			} else {
				rr.rm = append(rr.rm, t)
			}
		}
		if err := benchkit.SleepCtx(ctx, 300*time.Millisecond); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

// appContainers maps pod name → ID of its running app container.
func (b *bench) appContainers(ctx context.Context, node string) (map[string]string, error) {
	f := filters.NewArgs(filters.Arg("status", "running"),
		filters.Arg("label", nodeLabel+"="+node), filters.Arg("label", ctrLabel+"=app"))
	list, err := b.cli.ContainerList(ctx, container.ListOptions{Filters: f})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, c := range list {
		out[c.Labels[podLabel]] = c.ID
	}
	return out, nil
}

// reactOnce kills or removes app container old of pod and times berth's
// replacement through the engine's event timestamps.
func (b *bench) reactOnce(ctx context.Context, node, pod, old, kind string) (reactionTrial, error) {
	var t reactionTrial
	if old == "" {
		return t, errors.New("no running app container")
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := b.watch(wctx, time.Now(), map[string]string{nodeLabel: node, podLabel: pod}, "die", "destroy", "create", "start")
	if err != nil {
		return t, err
	}
	t0 := time.Now()
	if kind == "kill" {
		err = b.cli.ContainerKill(ctx, old, "KILL")
	} else {
		err = b.cli.ContainerRemove(ctx, old, container.RemoveOptions{Force: true})
	}
	if err != nil {
		return t, err
	}
	var die, gone, created, started time.Time
	deadline := time.After(30 * time.Second)
	for started.IsZero() || gone.IsZero() {
		m, err := w.next(ctx, deadline)
		if err != nil {
			return t, fmt.Errorf("waiting for the replacement: %w", err)
		}
		at := eventTime(m)
		isNew := m.Actor.ID != old && m.Actor.Attributes[ctrLabel] == "app"
		switch {
		case m.Actor.ID == old && m.Action == events.ActionDie:
			die = at
			if kind == "kill" {
				gone = at
			}
		case m.Actor.ID == old && m.Action == events.ActionDestroy && kind == "rm":
			gone = at
		case isNew && m.Action == events.ActionCreate && created.IsZero():
			created = at
		case isNew && m.Action == events.ActionStart && started.IsZero():
			started = at
		}
	}
	if die.IsZero() {
		return t, errors.New(`no "die" event for the old container`)
	}
	t.callToGone = gone.Sub(t0)
	t.goneToStart = started.Sub(gone)
	t.dieToStart = started.Sub(die)
	t.dieToCreate = created.Sub(die)
	t.callToStart = started.Sub(t0)
	return t, nil
}

// dockerOnlyStarts times, trials times, creating and starting one app
// container joined to a running sandbox, directly: Docker's own start time.
func (b *bench) dockerOnlyStarts(ctx context.Context, rr *reactionResults) error {
	match := map[string]string{labelRun: b.id, labelCase: "docker-only"}
	defer func() {
		cctx, cancel := cleanupCtx()
		defer cancel()
		if _, err := b.removeAll(cctx, match); err != nil {
			logf("cleanup docker-only: %v", err)
		}
	}()
	sandbox, err := b.runDirect(ctx, &runtime.ContainerConfig{
		Name: "berthbench_" + b.id + "_docker-only_POD", Image: b.pauseImage, Labels: match, Hostname: "docker-only",
	})
	if err != nil {
		return err
	}
	for i := 0; i < b.opt.trials; i++ {
		d, call, err := b.dockerOnlyOnce(ctx, sandbox, match, i)
		if err != nil {
			return err
		}
		rr.dockerOnly = append(rr.dockerOnly, d)
		rr.dockerCall = append(rr.dockerCall, call)
		if err := benchkit.SleepCtx(ctx, 300*time.Millisecond); err != nil {
			return err
		}
	}
	logf("docker-only create+start: median %.1f ms", msf(summarize(rr.dockerOnly).med))
	return nil
}

func (b *bench) dockerOnlyOnce(ctx context.Context, sandbox string, match map[string]string, i int) (toEvent, call time.Duration, err error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := b.watch(wctx, time.Now(), match, "start")
	if err != nil {
		return 0, 0, err
	}
	t0 := time.Now()
	id, err := b.runDirect(ctx, &runtime.ContainerConfig{
		Name:  fmt.Sprintf("berthbench_%s_docker-only_app_%d", b.id, i),
		Image: testImage, Cmd: []string{"sleep"}, Labels: match, NetworkMode: "container:" + sandbox,
	})
	call = time.Since(t0)
	if id != "" {
		defer func() {
			cctx, cancel := cleanupCtx()
			defer cancel()
			_ = b.dk.RemoveContainer(cctx, id)
		}()
	}
	if err != nil {
		return 0, 0, err
	}
	deadline := time.After(30 * time.Second)
	for {
		m, err := w.next(ctx, deadline)
		if err != nil {
			return 0, 0, err
		}
		if m.Actor.ID == id {
			return eventTime(m).Sub(t0), call, nil
		}
	}
}
