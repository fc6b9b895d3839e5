package controller

import (
	"context"
	"time"
)

// DefaultMaxParallelStops is how many pods may stop containers at once
// when Config.MaxParallelStops is not set.
const DefaultMaxParallelStops = 16

// stopSlotHold is the longest a pod keeps its stop slot. The engine's
// work in a stop (the signal, the exit, the cleanup) takes well under it
// even with a slot's worth of pods stopping; a pod still stopping then is
// waiting for its processes to use up their grace period, which costs the
// engine nothing, and no longer holds up the pods behind it.
const stopSlotHold = 2 * time.Second

// slot waits, as long as ctx allows, for one of the controller's stop
// slots (Config.MaxParallelStops) and returns its release, to be called
// once. The slot goes back by itself after stopSlotHold.
func (l *lifecycle) slot(ctx context.Context) (release func(), err error) {
	if err := l.slots.Acquire(ctx, 1); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	expired := l.cfg.Clock.After(stopSlotHold)
	go func() {
		select {
		case <-done:
		case <-expired:
		}
		l.slots.Release(1)
	}()
	return func() { close(done) }, nil
}
