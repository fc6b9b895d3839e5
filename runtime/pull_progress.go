package runtime

import (
	"fmt"
	"sort"

	"github.com/docker/docker/pkg/jsonmessage"
)

// PullProgress is how far one image pull is, summed over its layers. Total
// counts only layers whose size the registry has told so far, so it may
// grow while the pull runs.
type PullProgress struct {
	Done, Total        int64
	Layers, LayersDone int
}

// String renders the progress as a person waiting reads it:
// "12.3 MiB of 40.1 MiB (2/5 layers)".
func (p PullProgress) String() string {
	return fmt.Sprintf("%s of %s (%d/%d layers)", humanBytes(p.Done), humanBytes(p.Total), p.LayersDone, p.Layers)
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// pullTracker folds the engine's per-layer pull messages into one
// PullProgress. Not safe for concurrent use.
type pullTracker struct {
	layers map[string]*layerProgress
}

type layerProgress struct {
	done, total int64
	complete    bool
}

// add folds one message in and reports whether the progress changed.
func (t *pullTracker) add(msg *jsonmessage.JSONMessage) bool {
	if msg.ID == "" || msg.Status == "" {
		return false
	}
	if t.layers == nil {
		t.layers = map[string]*layerProgress{}
	}
	l := t.layers[msg.ID]
	switch msg.Status {
	case "Pulling fs layer", "Waiting":
		if l == nil {
			t.layers[msg.ID] = &layerProgress{}
			return true
		}
		return false
	case "Downloading":
		if l == nil {
			l = &layerProgress{}
			t.layers[msg.ID] = l
		}
		if msg.Progress == nil || (msg.Progress.Current == l.done && msg.Progress.Total == l.total) {
			return false
		}
		l.done, l.total = msg.Progress.Current, msg.Progress.Total
		return true
	case "Download complete", "Pull complete", "Already exists":
		if l == nil {
			l = &layerProgress{}
			t.layers[msg.ID] = l
		}
		if l.complete {
			return false
		}
		l.complete = true
		if l.total > 0 {
			l.done = l.total
		}
		return true
	}
	return false
}

func (t *pullTracker) progress() PullProgress {
	ids := make([]string, 0, len(t.layers))
	for id := range t.layers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var p PullProgress
	for _, id := range ids {
		l := t.layers[id]
		p.Layers++
		p.Done += l.done
		p.Total += l.total
		if l.complete {
			p.LayersDone++
		}
	}
	return p
}
