package filesource

import (
	"log/slog"

	"github.com/berth-dev/berth/sources"
)

// skipLog logs each skipped directory entry once, with its reason, while it
// stays skipped; hidden entries, which the kubelet skips silently, are not
// logged.
type skipLog map[string]string

func (l *skipLog) log(log *slog.Logger, skipped []sources.SkippedEntry) {
	next := make(skipLog, len(skipped))
	for _, e := range skipped {
		if e.Hidden() {
			continue
		}
		if (*l)[e.Path] != e.Reason {
			log.Info("not reading a directory entry", "path", e.Path, "reason", e.Reason)
		}
		next[e.Path] = e.Reason
	}
	*l = next
}
