package controller

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

// orderKills gives the plan's kills the kubelet's termination order
// (KEP-753): app containers and regular init containers first (Order 0),
// then the sidecars one at a time in reverse order of declaration, as
// their labels say it (the spec may be gone). Sandboxes go after every
// container whatever their Order (killAll).
func orderKills(pl *Plan) {
	var idx []int
	for _, k := range pl.Kill {
		if i, ok := sidecarIndex(k.Container); ok {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	for j := range pl.Kill {
		if i, ok := sidecarIndex(pl.Kill[j].Container); ok {
			pos, _ := slices.BinarySearch(idx, i)
			pl.Kill[j].Order = len(idx) - pos
		}
	}
}

// sidecarIndex is ct's index among its pod's init containers when it is a
// sidecar.
func sidecarIndex(ct *model.Container) (int, bool) {
	l, _ := runtime.DecodeLabels(ct.Labels)
	if l.Sidecar == nil {
		return 0, false
	}
	return *l.Sidecar, true
}

// killAll carries out kills by ascending Order: the kills of one Order side
// by side, and the stop of each once every kill of a lower Order ended.
// Every preStop hook starts at once, as in the kubelet; the wait for the
// turn uses up the container's grace period (waitTurn). Sandboxes go last,
// once every container is stopped.
func (c *Controller) killAll(ctx context.Context, kills []Kill) error {
	var sandboxes []Kill
	byOrder := map[int][]Kill{}
	for _, k := range kills {
		if k.Container.Name == model.SandboxName {
			sandboxes = append(sandboxes, k)
			continue
		}
		byOrder[k.Order] = append(byOrder[k.Order], k)
	}
	orders := make([]int, 0, len(byOrder))
	for o := range byOrder {
		orders = append(orders, o)
	}
	slices.Sort(orders)
	var (
		all  sync.WaitGroup
		mu   sync.Mutex
		errs []error
		turn <-chan struct{}
	)
	for _, o := range orders {
		var this sync.WaitGroup
		for _, k := range byOrder[o] {
			all.Add(1)
			this.Add(1)
			go func(turn <-chan struct{}) {
				defer all.Done()
				defer this.Done()
				if err := c.stopInTurn(ctx, k.Container, k.Remove, k.Grace, turn); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}(turn)
		}
		done := make(chan struct{})
		go func() {
			this.Wait()
			close(done)
		}()
		turn = done
	}
	all.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return c.killParallel(ctx, sandboxes)
}

func (c *Controller) killParallel(ctx context.Context, kills []Kill) error {
	if len(kills) == 1 {
		return c.stopWithin(ctx, kills[0].Container, kills[0].Remove, kills[0].Grace)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(kills))
	for i, k := range kills {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.stopWithin(ctx, k.Container, k.Remove, k.Grace)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// waitTurn waits for turn to close (nil: no wait), for at most grace, and
// returns the grace left for the stop: at least model.MinGracePeriod, as
// the kubelet always gives.
func (c *Controller) waitTurn(ctx context.Context, turn <-chan struct{}, grace time.Duration) time.Duration {
	if turn == nil {
		return grace
	}
	start := c.cfg.Clock.Now()
	t := c.cfg.Clock.NewTimer(grace)
	defer t.Stop()
	select {
	case <-turn:
	case <-t.C():
	case <-ctx.Done():
	}
	return max(grace-c.cfg.Clock.Since(start), model.MinGracePeriod)
}
