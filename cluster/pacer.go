package cluster

import "time"

// pacer decides when the publisher writes the changes it has not written
// yet. An urgent change (one users wait for: a phase reached, readiness, a
// pod gone) is written at once when the last write is at least coalesce
// old, else coalesce after it: a burst becomes one write per coalesce, led
// by a write at its first change. Other changes wait up to interval after
// the first of them, and go with any earlier write. A failed write is
// retried interval later. Nothing pending, nothing due: an idle node writes
// nothing. Times come from the caller's clock.
type pacer struct {
	interval, coalesce time.Duration

	last    time.Time // last write, zero before the first
	since   time.Time // first change not written, zero when none
	urgent  bool      // a pending change is urgent
	retryAt time.Time // no write before this after a failure
}

// changed records changes seen at now.
func (p *pacer) changed(now time.Time, urgent bool) {
	if p.since.IsZero() {
		p.since = now
	}
	p.urgent = p.urgent || urgent
}

// pending reports whether a change waits to be written, and whether an
// urgent one does.
func (p *pacer) pending() (any, urgent bool) { return !p.since.IsZero(), p.urgent }

// due returns when the pending changes are to be written; ok is false
// when nothing is pending.
func (p *pacer) due() (at time.Time, ok bool) {
	if p.since.IsZero() {
		return time.Time{}, false
	}
	if p.urgent {
		at = p.since
		if !p.last.IsZero() {
			at = later(at, p.last.Add(p.coalesce))
		}
	} else {
		at = p.since.Add(p.interval)
	}
	return later(at, p.retryAt), true
}

// wrote records a write at now of everything pending.
func (p *pacer) wrote(now time.Time) {
	p.last, p.since, p.urgent, p.retryAt = now, time.Time{}, false, time.Time{}
}

// failed records a failed write at now; what was pending stays pending.
func (p *pacer) failed(now time.Time) { p.retryAt = now.Add(p.interval) }

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
