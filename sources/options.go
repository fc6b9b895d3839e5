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

// Ticker is the source's clock: Clock, or the real clock when nil.
func (o Options) Ticker() clock.WithTicker {
	if o.Clock == nil {
		return clock.RealClock{}
	}
	return o.Clock
}

// Logger is where the source logs: Log, or a discarding logger when nil.
func (o Options) Logger() *slog.Logger {
	if o.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Log
}

// clock and logger are Ticker and Logger, for the sources of this package.
func (o Options) clock() clock.WithTicker { return o.Ticker() }
func (o Options) logger() *slog.Logger    { return o.Logger() }
