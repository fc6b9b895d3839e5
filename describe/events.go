package describe

import (
	"fmt"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// eventRun is a run of events alike in type, reason, object field
// and message (berth serves each occurrence as an Event of its own),
// shown once with their count as kubectl shows an event's Count.
type eventRun struct {
	typ, reason, from, message string
	count                      int32
	first, last                time.Time
}

func (d writer) events(evs []v1.Event, now time.Time) {
	if len(evs) == 0 {
		d.line(0, "Events:\t<none>")
		return
	}
	var groups []*eventRun
	byKey := map[[4]string]*eventRun{}
	for _, e := range evs {
		first, last, count := eventTimes(&e)
		k := [4]string{e.Type, e.Reason, e.InvolvedObject.FieldPath, e.Message}
		if g, ok := byKey[k]; ok {
			g.count += count
			g.first = minTime(g.first, first)
			g.last = maxTime(g.last, last)
			continue
		}
		from := e.Source.Component
		if from == "" {
			from = e.ReportingController
		}
		g := &eventRun{typ: e.Type, reason: e.Reason, from: from, message: e.Message, count: count, first: first, last: last}
		byKey[k] = g
		groups = append(groups, g)
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].last.Before(groups[j].last) })
	// kubectl flushes before the table so its columns are its own.
	_ = d.tw.Flush()
	d.line(0, "Events:")
	d.line(1, "Type\tReason\tAge\tFrom\tMessage")
	d.line(1, "----\t------\t----\t----\t-------")
	for _, g := range groups {
		ago := duration.HumanDuration(now.Sub(g.last))
		if g.count > 1 {
			ago = fmt.Sprintf("%s (x%d over %s)", ago, g.count, duration.HumanDuration(now.Sub(g.first)))
		}
		d.line(1, "%s\t%s\t%s\t%s\t%s", g.typ, g.reason, ago, g.from, strings.TrimSpace(g.message))
	}
}

// eventTimes are an event's first and last times and its count, from the
// fields its writer filled (core/v1 or events.k8s.io style).
func eventTimes(e *v1.Event) (first, last time.Time, count int32) {
	first, last, count = e.FirstTimestamp.Time, e.LastTimestamp.Time, max(e.Count, 1)
	if last.IsZero() {
		last = e.EventTime.Time
	}
	if last.IsZero() {
		last = e.CreationTimestamp.Time
	}
	if first.IsZero() {
		first = last
	}
	return first, last, count
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
