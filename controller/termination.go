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

// killAll carries out kills in the kubelet's termination order: the stops
// by ascending Order, those of one Order side by side and those of the
// next once every lower one stopped, then the sandboxes once every other
// container stopped. A container's removal (or refresh) starts as soon as
// it stopped, beside the stops that follow: only stops are ordered. Every
// preStop hook starts at once, as in the kubelet; the wait for the turn
// uses up the container's grace period (waitTurn). When any kill stops a
// process, the pod first waits for a stop slot (slot). A failed stop
// leaves the sandboxes running.
func (l *lifecycle) killAll(ctx context.Context, kills []Kill) error {
	if stopsAny(kills) {
		release, err := l.slot(ctx)
		if err != nil {
			return err
		}
		defer release()
	}
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
		stops, afters sync.WaitGroup
		mu            sync.Mutex
		stopErrs      []error
		afterErrs     []error
	)
	// kill stops k after turn, then starts its removal; afters.Add is
	// always called before stops.Wait returns.
	kill := func(k Kill, turn <-chan struct{}, ended func()) {
		defer stops.Done()
		defer ended()
		if err := l.stopRunning(ctx, k.Container, k.Grace, turn); err != nil {
			mu.Lock()
			stopErrs = append(stopErrs, err)
			mu.Unlock()
			return
		}
		afters.Add(1)
		go func() {
			defer afters.Done()
			if err := l.afterStop(ctx, k.Container, k.Remove); err != nil {
				mu.Lock()
				afterErrs = append(afterErrs, err)
				mu.Unlock()
			}
		}()
	}
	var turn <-chan struct{}
	for _, o := range orders {
		var this sync.WaitGroup
		for _, k := range byOrder[o] {
			stops.Add(1)
			this.Add(1)
			go kill(k, turn, this.Done)
		}
		done := make(chan struct{})
		go func() {
			this.Wait()
			close(done)
		}()
		turn = done
	}
	stops.Wait()
	if len(stopErrs) == 0 {
		for _, k := range sandboxes {
			stops.Add(1)
			go kill(k, nil, func() {})
		}
		stops.Wait()
	}
	afters.Wait()
	return errors.Join(append(stopErrs, afterErrs...)...)
}

// stopsAny reports whether a kill stops a running process.
func stopsAny(kills []Kill) bool {
	return slices.ContainsFunc(kills, func(k Kill) bool { return k.Container.Running() })
}

// waitTurn waits for turn to close (nil: no wait), for at most grace, and
// returns the grace left for the stop: at least model.MinGracePeriod, as
// the kubelet always gives.
func (l *lifecycle) waitTurn(ctx context.Context, turn <-chan struct{}, grace time.Duration) time.Duration {
	if turn == nil {
		return grace
	}
	start := l.cfg.Clock.Now()
	t := l.cfg.Clock.NewTimer(grace)
	defer t.Stop()
	select {
	case <-turn:
	case <-t.C():
	case <-ctx.Done():
	}
	return max(grace-l.cfg.Clock.Since(start), model.MinGracePeriod)
}
