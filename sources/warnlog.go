package sources

import (
	"crypto/sha256"
	"encoding/json"
	"log/slog"

	"github.com/berth-dev/berth/manifest"
)

// warnLog logs each pod's warning line once per spec: again only when the
// pod's origin or spec changed, or after it was gone from an update.
type warnLog struct {
	last map[string][sha256.Size]byte // pod key -> hash of origin and spec, of pods with a warning
}

// log logs the warning lines of the pods of one complete update.
func (w *warnLog) log(log *slog.Logger, pods []manifest.Desired) {
	next := make(map[string][sha256.Size]byte, len(pods))
	for _, d := range pods {
		line := manifest.WarningLine(d)
		if line == "" {
			continue
		}
		key := manifest.PodKey(d.Pod.Namespace, d.Pod.Name)
		spec, _ := json.Marshal(d.Pod.Spec)
		sum := sha256.Sum256(append([]byte(d.Origin+"\x00"), spec...))
		next[key] = sum
		if old, ok := w.last[key]; !ok || old != sum {
			log.Warn(line)
		}
	}
	w.last = next
}
