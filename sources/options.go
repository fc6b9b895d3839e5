package sources

import (
	"log/slog"

	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/manifest"
)

// Options are what a source's pods may do (the embedded manifest.Options,
// applied to every pod it decodes), how much it may declare and where the
// source logs.
type Options struct {
	manifest.Options
	// Quota bounds the source's pods, objects and manifest bytes (zero:
	// none). The push source refuses a write over it; the network sources
	// leave out what is beyond it, with an error naming the quota.
	Quota Quota
	// Log receives the source's own log lines (nil: discarded).
	Log *slog.Logger
	// Clock drives rescans, polls, debounces, health checks and retries
	// (nil: the real clock). File times are compared with the kernel's
	// clock, never with this one.
	Clock clock.WithTicker
}

func (o Options) clock() clock.WithTicker {
	if o.Clock == nil {
		return clock.RealClock{}
	}
	return o.Clock
}

func (o Options) logger() *slog.Logger {
	if o.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Log
}
