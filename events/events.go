// Package events records what berth did to pods (created, started, killed,
// failed, backed off) for the API's /events and, when etcd is configured,
// under /events/<ns>/<pod>/<unix-nanos> as the seed kubelet did.
package events

import (
	"sync"
	"time"
)

// Event types, as in Kubernetes.
const (
	Normal  = "Normal"
	Warning = "Warning"
)

// Event is one thing that happened to a pod or one of its containers, or
// to the node. Namespace and Pod name the pod; PodUID and Source say which
// pod of that name it was, so that a later pod taking the name (from any
// source) is never shown an earlier one's events. An event about the node
// names it in Node instead (Pod and PodUID empty, Namespace "default" as
// the kubelet records node events), Source being the source it concerns.
type Event struct {
	Time      time.Time `json:"time"`
	Namespace string    `json:"namespace"`
	Pod       string    `json:"pod"`
	PodUID    string    `json:"podUID,omitempty"`
	Node      string    `json:"node,omitempty"`
	Source    string    `json:"source,omitempty"`
	Container string    `json:"container,omitempty"`
	Type      string    `json:"type"`
	Reason    string    `json:"reason"`
	Message   string    `json:"message"`
}

// Object is the name of the object e is about: the node's or the pod's.
func (e Event) Object() string {
	if e.Node != "" {
		return e.Node
	}
	return e.Pod
}

// Recorder takes events. Record must not block: sinks drop rather than
// stall a reconcile.
type Recorder interface {
	Record(e Event)
}

// Multi fans an event out to several recorders.
type Multi []Recorder

// Record implements Recorder.
func (m Multi) Record(e Event) {
	for _, r := range m {
		r.Record(e)
	}
}

// Discard drops every event.
type Discard struct{}

// Record implements Recorder.
func (Discard) Record(Event) {}

// Buffer keeps the most recent events in memory, oldest first.
type Buffer struct {
	mu   sync.Mutex
	max  int
	ring []Event
	next int
	full bool
}

// NewBuffer keeps at most max events.
func NewBuffer(max int) *Buffer {
	if max <= 0 {
		max = 1000
	}
	return &Buffer{max: max, ring: make([]Event, max)}
}

// Record implements Recorder.
func (b *Buffer) Record(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ring[b.next] = e
	b.next = (b.next + 1) % b.max
	if b.next == 0 {
		b.full = true
	}
}

// List returns the kept events, newest last.
func (b *Buffer) List() []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.full {
		return append([]Event(nil), b.ring[:b.next]...)
	}
	out := make([]Event, 0, b.max)
	out = append(out, b.ring[b.next:]...)
	return append(out, b.ring[:b.next]...)
}

// Occurred is an event as kept with its repeats: Event its first
// occurrence, Count how many times it occurred and LastTime the latest.
type Occurred struct {
	Event
	Count    int32     `json:"count"`
	LastTime time.Time `json:"lastTime"`
}
