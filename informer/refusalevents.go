package informer

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/sources"
)

// The limits of the source informer's events, in the spirit of client-go's
// event spam filter: an origin refused in thousands of ways costs a few
// event writes per update, never one per refusal.
const (
	// RefusalResend is how often a refusal every update of its source
	// still carries is recorded again (aggregating into its event: the
	// count rises), and a read failure that goes on; a refusal the
	// previous update did not carry is recorded at once.
	RefusalResend = 5 * time.Minute
	// MaxRefusalEvents is the most refusals one update records; the rest
	// are one node event counting them (berth's log names each).
	MaxRefusalEvents = 10
)

// refusal is one event the informer may record: its reason and message,
// about the pod podKey (when the source's stored pod of that key is
// there, else the node).
type refusal struct{ podKey, reason, msg string }

// sourceEvents is what the informer recorded of a source. Guarded by
// SourceInformer.mu.
type sourceEvents struct {
	// sent holds the refusals of the source's last update that was read,
	// each with when it was last recorded.
	sent map[refusal]time.Time
	// failing: the source's last update was a read failure; failMsg and
	// failAt are the last read failure recorded and when.
	failing bool
	failMsg string
	failAt  time.Time
}

// sourceEvents returns the record of source, made on first use; i.mu
// held.
func (i *SourceInformer) sourceEvents(source string) *sourceEvents {
	se := i.recorded[source]
	if se == nil {
		se = &sourceEvents{}
		i.recorded[source] = se
	}
	return se
}

// refusals are the events u's manifest errors and admission's refusals
// (refused, by pod key or object ref) are, in a stable order.
func refusals(u sources.Update, refused map[string]string) []refusal {
	out := make([]refusal, 0, len(u.Errors)+len(refused))
	for _, e := range u.Errors {
		pod := ""
		if e.Kind == "" {
			pod = e.PodKey
		}
		out = append(out, refusal{pod, ReasonInvalidManifest, e.Error()})
	}
	for k, msg := range refused {
		pod := ""
		if strings.Count(k, "/") == 1 { // a pod key; an object's ref has its kind before
			pod = k
		}
		out = append(out, refusal{pod, ReasonManifestRefused, msg})
	}
	sort.Slice(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if x.msg != y.msg {
			return x.msg < y.msg
		}
		if x.reason != y.reason {
			return x.reason < y.reason
		}
		return x.podKey < y.podKey
	})
	return out
}

// dueRefusals returns, of rs (the refusals of an update of source read at
// now), those to record: each the previous update did not carry, or last
// recorded RefusalResend ago, at most MaxRefusalEvents of them, then one
// counting the others due. It remembers rs as the source's last refusals.
// i.mu held.
func (i *SourceInformer) dueRefusals(source string, rs []refusal, now time.Time) []refusal {
	se := i.sourceEvents(source)
	se.failing = false
	sent := make(map[refusal]time.Time, len(rs))
	var due []refusal
	more := 0
	for _, r := range rs {
		if _, dup := sent[r]; dup {
			continue
		}
		if at, ok := se.sent[r]; ok && now.Sub(at) < RefusalResend {
			sent[r] = at
			continue
		}
		sent[r] = now
		if len(due) < MaxRefusalEvents {
			due = append(due, r)
		} else {
			more++
		}
	}
	se.sent = sent
	if more > 0 {
		due = append(due, refusal{"", ReasonManifestRefused,
			fmt.Sprintf("%s source: and %d more manifests refused, not each an event (berth's log names each)", source, more)})
	}
	return due
}

// readFailureDue reports whether a read failure of source with message
// msg (normalised) at now is recorded: the first of an outage unless it
// repeats the last one recorded within RefusalResend, and then at most
// once per RefusalResend however its message varies (the source's node
// condition shows the current error). i.mu held.
func (i *SourceInformer) readFailureDue(source, msg string, now time.Time) bool {
	se := i.sourceEvents(source)
	wasFailing := se.failing
	se.failing = true
	recent := !se.failAt.IsZero() && now.Sub(se.failAt) < RefusalResend
	if recent && (wasFailing || msg == se.failMsg) {
		return false
	}
	se.failMsg, se.failAt = msg, now
	return true
}

// localPort matches the local port of a connection in a Go network error
// ("read tcp 10.0.0.1:43122->10.0.0.2:80: ..."): a new one each read.
var localPort = regexp.MustCompile(`:\d+->`)

// stableError is err's message without the parts that differ from one
// read to the next (the local port), so that one failure repeating is one
// event.
func stableError(err error) string { return localPort.ReplaceAllString(err.Error(), "->") }

// recordAll records rs as Warning events of source at now.
func (i *SourceInformer) recordAll(source string, rs []refusal, now time.Time) {
	for _, r := range rs {
		i.record(source, r.podKey, events.Warning, r.reason, r.msg, now)
	}
}
