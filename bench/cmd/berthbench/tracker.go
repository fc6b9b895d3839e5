package main

// The clock of the start and teardown scenarios: the engine's own event
// timestamps, followed on one blocking events stream (no polling, no CPU
// while it waits), for every system alike.

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/docker/docker/api/types/events"
)

// labelRole marks the containers the bench creates itself (direct and
// compose) as "sandbox" or "app"; berth's say it with its container name
// label ("POD" is the sandbox).
const labelRole = "berthbench.role"

// tracker follows one set of containers (one system's pods of one cycle)
// through create, start, kill, die and destroy, on the engine's clock.
type tracker struct {
	w           *watcher
	firstCreate time.Time
	lastStart   time.Time
	lastDestroy time.Time
	started     map[string]bool
	sandbox     map[string]bool // id → is a sandbox
	killed      map[string]time.Time
	died        map[string]time.Time
	exitCode    map[string]int
	destroyed   map[string]bool
}

// lifecycleActions are the events a tracker needs.
var lifecycleActions = []string{"create", "start", "kill", "die", "destroy"}

// track opens the events stream of the containers carrying every label of
// match from since on.
func (b *bench) track(ctx context.Context, since time.Time, match map[string]string) (*tracker, error) {
	w, err := b.watch(ctx, since, match, lifecycleActions...)
	if err != nil {
		return nil, err
	}
	return &tracker{w: w, started: map[string]bool{}, sandbox: map[string]bool{}, killed: map[string]time.Time{},
		died: map[string]time.Time{}, exitCode: map[string]int{}, destroyed: map[string]bool{}}, nil
}

func (t *tracker) record(m events.Message) {
	id, at := m.Actor.ID, eventTime(m)
	a := m.Actor.Attributes
	if a[labelRole] == "sandbox" || a[ctrLabel] == "POD" {
		t.sandbox[id] = true
	}
	switch m.Action {
	case events.ActionCreate:
		if t.firstCreate.IsZero() || at.Before(t.firstCreate) {
			t.firstCreate = at
		}
	case events.ActionStart:
		if !t.started[id] {
			t.started[id] = true
			if at.After(t.lastStart) {
				t.lastStart = at
			}
		}
	case events.ActionKill:
		if _, ok := t.killed[id]; !ok {
			t.killed[id] = at
		}
	case events.ActionDie:
		if _, ok := t.died[id]; !ok {
			t.died[id] = at
			t.exitCode[id], _ = strconv.Atoi(a["exitCode"])
		}
	case events.ActionDestroy:
		if !t.destroyed[id] {
			t.destroyed[id] = true
			if at.After(t.lastDestroy) {
				t.lastDestroy = at
			}
		}
	}
}

// until consumes events until done holds, failing after timeout.
func (t *tracker) until(ctx context.Context, timeout time.Duration, what string, done func() bool) error {
	deadline := time.After(timeout)
	for !done() {
		m, err := t.w.next(ctx, deadline)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		t.record(m)
	}
	return nil
}

// waitStarted waits until want distinct containers started.
func (t *tracker) waitStarted(ctx context.Context, want int, timeout time.Duration) error {
	return t.until(ctx, timeout, fmt.Sprintf("waiting for %d containers to start", want), func() bool { return len(t.started) >= want })
}

// waitDestroyed waits until every container that started was destroyed.
func (t *tracker) waitDestroyed(ctx context.Context, timeout time.Duration) error {
	return t.until(ctx, timeout, fmt.Sprintf("waiting for %d containers to be destroyed", len(t.started)), func() bool {
		for id := range t.started {
			if !t.destroyed[id] {
				return false
			}
		}
		return true
	})
}

// stopStats are the app containers' stops: the median of kill (the
// signal sent) → die, and how many containers of any role died of
// SIGKILL (exit code 137: the grace period ran out).
func (t *tracker) stopStats() (appStop time.Duration, sigkilled int) {
	var ds []time.Duration
	for id, d := range t.died {
		if t.exitCode[id] == 137 {
			sigkilled++
		}
		k, ok := t.killed[id]
		if ok && !t.sandbox[id] {
			ds = append(ds, d.Sub(k))
		}
	}
	if len(ds) == 0 {
		return 0, sigkilled
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], sigkilled
}
