// Package fake is an in-memory Docker engine (runtime.Runtime) for tests,
// benchmarks and simulations, with hooks a test drives (exits, blocked
// stops and pulls, overtaken inspects). Production code never imports it.
package fake

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/berth-dev/berth/runtime"
)

// Runtime is an in-memory runtime.Runtime for controller unit tests and
// simulations. Containers start instantly; tests drive exits with Exit.
// Each part implements one of runtime.Runtime's interfaces; all share one
// state under one lock, so the engine stays one, ordered as Docker orders
// it. The hooks a test sets (Calls, PullErr, StartErr, StopBlock,
// PullBlock, PullSteps, ExecFunc, InspectHook) are fields of that state.
type Runtime struct {
	*state
	containerFake
	imageFake
	builderFake
	volumeFake
	streamFake
	eventFake
}

// state is the fake engine's, which every part of Runtime shares; mu
// guards it.
type state struct {
	mu          sync.Mutex
	now         func() time.Time
	seq         int
	containers  map[string]*fakeContainer
	images      map[string]bool
	imageLabels map[string]map[string]string
	imageMeta   map[string]runtime.Image // created and size, set by SetImage
	// imageIDs are the IDs of references whose image was replaced (a build
	// of other content, ReplaceImage); the others' is fakeImageID(ref).
	imageIDs map[string]string
	// dangling are the IDs of replaced images, still usable by ID.
	dangling map[string]bool
	// content is what built images hold, by ID.
	content     map[string]runtime.ImageContent
	volumes     map[string]runtime.VolumeConfig
	volumeTimes map[string]time.Time
	names       map[string]string // docker name -> id
	logs        map[string]string
	subs        map[int]chan runtime.Event
	subErrs     map[int]chan error
	nsubs       int
	// Calls counts calls by method name.
	Calls map[string]int
	// PullErr, when set, fails every PullImage.
	PullErr error
	// StartErr, when set, may fail StartContainer (the container stays
	// created, as Docker leaves it).
	StartErr func(cfg runtime.ContainerConfig) error
	// StopBlock, when set, makes StopContainer wait until it is closed.
	StopBlock chan struct{}
	// PullBlock, when set, makes PullImage wait until it is closed.
	PullBlock chan struct{}
	// PullSteps are reported to PullImage's progress before it blocks.
	PullSteps []runtime.PullProgress
	// ExecFunc answers Exec (default: exit 0, no output).
	ExecFunc func(id string, cmd []string) (int, []byte, error)
	// InspectHook, when set, runs after InspectContainer took its snapshot
	// and before it returns (outside the lock): an answer overtaken by
	// newer events. ctx is the caller's, so a test can pick its own call.
	InspectHook func(ctx context.Context, id string)
}

// containerFake is the fake's runtime.ContainerManager.
type containerFake struct{ *state }

// imageFake is the fake's runtime.ImageManager.
type imageFake struct{ *state }

// builderFake is the fake's runtime.ImageBuilder.
type builderFake struct{ *state }

// volumeFake is the fake's runtime.VolumeManager.
type volumeFake struct{ *state }

// streamFake is the fake's runtime.Streamer, and attaches.
type streamFake struct{ *state }

// eventFake is the fake's runtime.EventSource, and the events a test sends.
type eventFake struct{ *state }

var (
	_ runtime.Runtime          = (*Runtime)(nil)
	_ runtime.ContainerManager = (*containerFake)(nil)
	_ runtime.ImageManager     = (*imageFake)(nil)
	_ runtime.ImageBuilder     = (*builderFake)(nil)
	_ runtime.VolumeManager    = (*volumeFake)(nil)
	_ runtime.Streamer         = (*streamFake)(nil)
	_ runtime.EventSource      = (*eventFake)(nil)
)

// New returns an empty fake engine whose clock is now (time.Now if nil).
func New(now func() time.Time) *Runtime {
	if now == nil {
		now = time.Now
	}
	s := &state{now: now, containers: map[string]*fakeContainer{}, images: map[string]bool{}, imageLabels: map[string]map[string]string{}, names: map[string]string{}, logs: map[string]string{},
		imageIDs: map[string]string{}, dangling: map[string]bool{}, content: map[string]runtime.ImageContent{},
		volumes: map[string]runtime.VolumeConfig{}, volumeTimes: map[string]time.Time{},
		subs: map[int]chan runtime.Event{}, subErrs: map[int]chan error{}, Calls: map[string]int{}}
	return &Runtime{state: s, containerFake: containerFake{s}, imageFake: imageFake{s}, builderFake: builderFake{s},
		volumeFake: volumeFake{s}, streamFake: streamFake{s}, eventFake: eventFake{s}}
}

func (f *Runtime) Ping(ctx context.Context) error { return nil }

// CallCount returns how often method was called.
func (f *Runtime) CallCount(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.Calls[method]
}

func (f *state) call(name string) { f.Calls[name]++ }

// emit sends an event about fc with the engine's attributes: its labels,
// name and image, plus extra.
func (f *state) emit(fc *fakeContainer, action string, extra ...string) {
	attrs := make(map[string]string, len(fc.c.Labels)+2+len(extra)/2)
	for k, v := range fc.c.Labels {
		attrs[k] = v
	}
	attrs["name"], attrs["image"] = fc.c.DockerName, fc.c.Image
	for i := 0; i+1 < len(extra); i += 2 {
		attrs[extra[i]] = extra[i+1]
	}
	ev := runtime.Event{ContainerID: fc.c.ID, Action: action, Time: f.now(), Attributes: attrs}
	for _, ch := range f.subs {
		select {
		case ch <- ev:
		default: // a slow test subscriber loses hints, not state
		}
	}
}

func matches(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// fakeImageID is the local ID the fake gives image.
func fakeImageID(image string) string { return "sha256:" + fmt.Sprintf("%x", image) }
