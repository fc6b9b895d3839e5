package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"

	"github.com/berth-dev/berth/bench/internal/benchkit"
	"github.com/berth-dev/berth/runtime"
)

const (
	nodeLabel = runtime.LabelNode
	podLabel  = runtime.LabelPodName
	ctrLabel  = runtime.LabelContainerName
	uidLabel  = runtime.LabelPodUID
)

// monitorEngine holds an events stream that matches nothing and counts its
// breaks: each is a restart or outage of dockerd, which disturbs (and kills
// the containers of) any measurement in progress. It runs until ctx ends.
func (b *bench) monitorEngine(ctx context.Context) {
	f := filters.NewArgs(filters.Arg("label", "berthbench.never=1"))
	for {
		if err := b.waitEngine(ctx, time.Hour); err != nil {
			return
		}
		sctx, cancel := context.WithCancel(ctx)
		_, errs := b.cli.Events(sctx, events.ListOptions{Filters: f})
		select {
		case <-ctx.Done():
			cancel()
			return
		case err := <-errs:
			cancel()
			if ctx.Err() != nil {
				return
			}
			b.engineBreaks.Add(1)
			logf("the Docker event stream broke (%v): dockerd restarted or failed; a measurement in progress is repeated", err)
		}
		if benchkit.SleepCtx(ctx, time.Second) != nil {
			return
		}
	}
}

// waitEngine waits until the engine answers a ping.
func (b *bench) waitEngine(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := b.dk.Ping(pctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		if err := benchkit.SleepCtx(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
}

// disturbed reports an error when dockerd restarted since gen (a value of
// b.engineBreaks).
func (b *bench) disturbed(gen int64) error {
	if b.engineBreaks.Load() != gen {
		return errEngineRestarted
	}
	return nil
}

var errEngineRestarted = errors.New("dockerd restarted during the measurement")

// watcher is one Docker events stream of container events.
type watcher struct {
	msgs <-chan events.Message
	errs <-chan error
}

// watch follows container events carrying every label of match, from since
// on: the engine replays what happened after since from its buffer, so
// nothing is missed while the stream connects.
func (b *bench) watch(ctx context.Context, since time.Time, match map[string]string, actions ...string) (*watcher, error) {
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	f := filters.NewArgs(filters.Arg("type", string(events.ContainerEventType)))
	for k, v := range match {
		f.Add("label", k+"="+v)
	}
	for _, a := range actions {
		f.Add("event", a)
	}
	msgs, errs := b.cli.Events(ctx, events.ListOptions{
		Since:   fmt.Sprintf("%d.%09d", since.Unix(), since.Nanosecond()),
		Filters: f,
	})
	return &watcher{msgs: msgs, errs: errs}, nil
}

// next returns the next event, failing after deadline.
func (w *watcher) next(ctx context.Context, deadline <-chan time.Time) (events.Message, error) {
	select {
	case m := <-w.msgs:
		return m, nil
	case err := <-w.errs:
		if err == nil {
			err = errors.New("event stream closed")
		}
		return events.Message{}, fmt.Errorf("docker events: %w", err)
	case <-deadline:
		return events.Message{}, errors.New("timed out")
	case <-ctx.Done():
		return events.Message{}, ctx.Err()
	}
}

func eventTime(m events.Message) time.Time { return time.Unix(0, m.TimeNano) }

// startTimes are the times of a batch of container starts.
type startTimes struct {
	firstCreate time.Time // engine time of the earliest "create" event (zero if not watched)
	lastStart   time.Time // engine time of the want-th distinct container's "start"
	// seen is the bench's clock when the want-th distinct container's
	// "start" event arrived: all of them seen running, the one observation
	// that stops the clock of every system.
	seen time.Time
}

// waitStarts waits until want distinct containers have a "start" event.
func (w *watcher) waitStarts(ctx context.Context, want int, timeout time.Duration) (startTimes, error) {
	var st startTimes
	deadline := time.After(timeout)
	started := map[string]bool{}
	for len(started) < want {
		m, err := w.next(ctx, deadline)
		if err != nil {
			return st, fmt.Errorf("%d of %d containers started: %w", len(started), want, err)
		}
		at := eventTime(m)
		switch m.Action {
		case events.ActionCreate:
			if st.firstCreate.IsZero() || at.Before(st.firstCreate) {
				st.firstCreate = at
			}
		case events.ActionStart:
			if !started[m.Actor.ID] {
				started[m.Actor.ID] = true
				if at.After(st.lastStart) {
					st.lastStart = at
				}
			}
		}
	}
	st.seen = time.Now()
	return st, nil
}

// countRunning counts running containers carrying every label of match.
func (b *bench) countRunning(ctx context.Context, match map[string]string) (int, error) {
	f := filters.NewArgs(filters.Arg("status", "running"))
	for k, v := range match {
		f.Add("label", k+"="+v)
	}
	list, err := b.cli.ContainerList(ctx, container.ListOptions{Filters: f})
	return len(list), err
}

// removeAll force-removes (8 at a time) every container carrying every
// label of match, and reports how many it removed.
func (b *bench) removeAll(ctx context.Context, match map[string]string) (int, error) {
	f := filters.NewArgs()
	for k, v := range match {
		f.Add("label", k+"="+v)
	}
	list, err := b.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return 0, err
	}
	ids := make(chan string)
	errs := make(chan error, len(list))
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range ids {
				errs <- b.dk.RemoveContainer(ctx, id)
			}
		}()
	}
	for _, c := range list {
		ids <- c.ID
	}
	close(ids)
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return len(list), errors.Join(all...)
}

// runDirect creates and starts one container, as berth's runtime does.
func (b *bench) runDirect(ctx context.Context, cfg *runtime.ContainerConfig) (string, error) {
	id, err := b.dk.CreateContainer(ctx, cfg)
	if err != nil {
		return "", err
	}
	return id, b.dk.StartContainer(ctx, id)
}

// directPod makes the calls one benchmark pod cannot do without: create and
// start its sandbox, then create and start its app container joined to the
// sandbox's namespaces (app's sandboxToken replaced by the sandbox's ID).
// prep, if any, runs first (the berth-config baseline's bind sources). No
// inspect, no image check, nothing else.
func (b *bench) directPod(ctx context.Context, name string, sandbox, app containerSpec, prep func() error) (directPodIDs, error) {
	var ids directPodIDs
	if prep != nil {
		if err := prep(); err != nil {
			return ids, err
		}
	}
	var err error
	if ids.sandbox, err = b.createStart(ctx, name+"_POD", sandbox.Config, sandbox.HostConfig); err != nil {
		return ids, err
	}
	cfg, hc := app.withSandbox(ids.sandbox)
	ids.app, err = b.createStart(ctx, name+"_app", cfg, hc)
	return ids, err
}

func (b *bench) createStart(ctx context.Context, name string, cfg *container.Config, hc *container.HostConfig) (string, error) {
	resp, err := b.cli.ContainerCreate(ctx, cfg, hc, nil, nil, name)
	if err != nil {
		return "", fmt.Errorf("create %s: %w", name, err)
	}
	if err := b.cli.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
		return resp.ID, fmt.Errorf("start %s: %w", name, err)
	}
	return resp.ID, nil
}

// stopRemove stops a container gracefully (SIGTERM, SIGKILL after the
// pods' grace period) and removes it with its anonymous volumes, as berth
// does.
func (b *bench) stopRemove(ctx context.Context, id string) error {
	secs := grace
	if err := b.cli.ContainerStop(ctx, id, container.StopOptions{Timeout: &secs}); err != nil {
		return fmt.Errorf("stop %s: %w", id, err)
	}
	if err := b.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
		return fmt.Errorf("remove %s: %w", id, err)
	}
	return nil
}

// waitGone waits until no container carries every label of match (untimed
// cleanup: polls every 200 ms).
func (b *bench) waitGone(ctx context.Context, match map[string]string, timeout time.Duration) error {
	f := filters.NewArgs()
	for k, v := range match {
		f.Add("label", k+"="+v)
	}
	deadline := time.Now().Add(timeout)
	for {
		list, err := b.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
		if err == nil && len(list) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("%d containers left after %s", len(list), timeout)
			}
			return err
		}
		if err := benchkit.SleepCtx(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// composeFile renders the docker-compose equivalent of n benchmark pods:
// per pod a sandbox service from berth's pause image on the default bridge,
// and an app service joined to its network namespace; both stop within the
// pods' grace period.
func (b *bench) composeFile(n int, caseID string) string {
	var s strings.Builder
	s.WriteString("version: \"2.4\"\nservices:\n")
	labels := func(role string) string {
		return fmt.Sprintf("    labels: {%s: %q, %s: %q, %s: %q}\n    stop_grace_period: %ds\n", labelRun, b.id, labelCase, caseID, labelRole, role, grace)
	}
	for i := 0; i < n; i++ {
		p := podName(i)
		fmt.Fprintf(&s, "  %s-pod:\n    image: %q\n    hostname: %s\n    network_mode: bridge\n    ports: [\"%d:%d\"]\n%s", p, b.pauseImage, p, b.hostPort(i), appPort, labels("sandbox"))
		fmt.Fprintf(&s, "  %s-app:\n    image: %q\n    command: [\"sleep\"]\n    network_mode: \"service:%s-pod\"\n%s", p, testImage, p, labels("app"))
	}
	return s.String()
}

// composeWrite writes a compose file for project and registers the project
// for cleanup.
func (b *bench) composeWrite(project, content string) (string, error) {
	file := filepath.Join(b.work, project+".yml")
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		return "", err
	}
	b.mu.Lock()
	b.projects[project] = file
	b.mu.Unlock()
	return file, nil
}

// composeRun runs docker-compose with args (up -d, down) for a file of
// services and returns the command's wall time. COMPOSE_PARALLEL_LIMIT is
// raised to the number of services when that exceeds the default 64: with
// more services than the limit, docker-compose 1.x can deadlock
// (docker/compose#5864, #8161; here it stalled after 21 of 200 containers).
// A successful down unregisters the project.
func (b *bench) composeRun(ctx context.Context, project, file string, services int, timeout time.Duration, args ...string) (time.Duration, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, b.opt.compose, append([]string{"-p", project, "-f", file}, args...)...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+b.dockerHost,
		fmt.Sprintf("COMPOSE_PARALLEL_LIMIT=%d", composeParallel(services)))
	t := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(t)
	if err != nil {
		return d, fmt.Errorf("docker-compose %s: %v\n%s", args[0], err, tail(out, 2000))
	}
	if args[0] == "down" {
		b.mu.Lock()
		delete(b.projects, project)
		b.mu.Unlock()
	}
	return d, nil
}

// composeParallel is docker-compose's default parallelism (64), or the number
// of services when larger.
func composeParallel(services int) int { return max(64, services) }

// composeDown removes the project's containers (force, in parallel) and
// then runs `docker-compose down` for anything else it created.
func (b *bench) composeDown(ctx context.Context, project, file string) {
	b.mu.Lock()
	delete(b.projects, project)
	b.mu.Unlock()
	if _, err := b.removeAll(ctx, map[string]string{"com.docker.compose.project": project}); err != nil {
		logf("compose %s: %v", project, err)
	}
	cmd := exec.CommandContext(ctx, b.opt.compose, "-p", project, "-f", file, "down", "--remove-orphans", "-t", "1")
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+b.dockerHost)
	if out, err := cmd.CombinedOutput(); err != nil {
		logf("docker-compose down %s: %v\n%s", project, err, tail(out, 1000))
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
