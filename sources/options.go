package sources

import (
	"log/slog"

	"github.com/berth-dev/berth/manifest"
)

// Options are what a source's pods may do (the embedded manifest.Options,
// applied to every pod it decodes) and where the source logs.
type Options struct {
	manifest.Options
	// Log receives the source's own log lines (nil: discarded).
	Log *slog.Logger
}

func (o Options) logger() *slog.Logger {
	if o.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Log
}
