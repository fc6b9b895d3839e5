// Package fake is an in-memory Docker engine (runtime.Runtime) for tests,
// benchmarks and simulations, with hooks a test drives (exits, blocked
// stops and pulls, overtaken inspects). Production code never imports it.
package fake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

// Runtime is an in-memory runtime.Runtime for controller unit tests and
// simulations. Containers start instantly; tests drive exits with Exit.
type Runtime struct {
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

var _ runtime.Runtime = (*Runtime)(nil)

type fakeContainer struct {
	c   model.Container
	cfg runtime.ContainerConfig
}

// New returns an empty fake engine whose clock is now (time.Now if nil).
func New(now func() time.Time) *Runtime {
	if now == nil {
		now = time.Now
	}
	return &Runtime{now: now, containers: map[string]*fakeContainer{}, images: map[string]bool{}, imageLabels: map[string]map[string]string{}, names: map[string]string{}, logs: map[string]string{},
		imageIDs: map[string]string{}, dangling: map[string]bool{}, content: map[string]runtime.ImageContent{},
		volumes: map[string]runtime.VolumeConfig{}, volumeTimes: map[string]time.Time{},
		subs: map[int]chan runtime.Event{}, subErrs: map[int]chan error{}, Calls: map[string]int{}}
}

// AddImage makes image present.
func (f *Runtime) AddImage(image string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.images[image] = true
}

func (f *Runtime) call(name string) { f.Calls[name]++ }

// CallCount returns how often method was called.
func (f *Runtime) CallCount(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.Calls[method]
}

// emit sends an event about fc with the engine's attributes: its labels,
// name and image, plus extra.
func (f *Runtime) emit(fc *fakeContainer, action string, extra ...string) {
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

func (f *Runtime) Ping(ctx context.Context) error { return nil }

func matches(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func (f *Runtime) ListContainers(ctx context.Context, match map[string]string) ([]*model.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("ListContainers")
	var out []*model.Container
	for _, fc := range f.containers {
		if matches(fc.c.Labels, match) {
			// A summary, as the engine's list gives it.
			c := model.Container{ID: fc.c.ID, DockerName: fc.c.DockerName, Image: fc.c.Image, ImageID: fc.c.ImageID,
				State: fc.c.State, IP: fc.c.IP, CreatedAt: fc.c.CreatedAt}
			runtime.FillFromLabels(&c, fc.c.Labels)
			out = append(out, &c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (f *Runtime) InspectContainer(ctx context.Context, id string) (*model.Container, error) {
	f.mu.Lock()
	f.call("InspectContainer")
	fc, ok := f.containers[id]
	var c model.Container
	if ok {
		c = fc.c
	}
	hook := f.InspectHook
	f.mu.Unlock()
	if hook != nil {
		hook(ctx, id)
	}
	if !ok {
		return nil, fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	return &c, nil
}

// Config returns the configuration a container was created with.
func (f *Runtime) Config(id string) (runtime.ContainerConfig, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fc, ok := f.containers[id]
	if !ok {
		return runtime.ContainerConfig{}, false
	}
	return fc.cfg, true
}

func (f *Runtime) CreateContainer(ctx context.Context, cfg *runtime.ContainerConfig) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("CreateContainer")
	imageID, ok := f.lookupImage(cfg.Image)
	if !ok {
		return "", fmt.Errorf("image %s: %w", cfg.Image, runtime.ErrImageNotFound)
	}
	if _, taken := f.names[cfg.Name]; taken {
		return "", fmt.Errorf("container name %s: %w", cfg.Name, runtime.ErrNameConflict)
	}
	for _, m := range cfg.Mounts {
		if _, ok := f.volumes[m.Source]; m.Volume && !ok {
			return "", fmt.Errorf("volume %s: %w", m.Source, runtime.ErrNotFound)
		}
	}
	if strings.HasPrefix(cfg.NetworkMode, "container:") {
		if _, ok := f.containers[strings.TrimPrefix(cfg.NetworkMode, "container:")]; !ok {
			return "", fmt.Errorf("network container: %w", runtime.ErrNotFound)
		}
	}
	f.seq++
	id := fmt.Sprintf("%064x", f.seq)
	labels := make(map[string]string, len(cfg.Labels))
	for k, v := range cfg.Labels {
		labels[k] = v
	}
	c := model.Container{ID: id, DockerName: cfg.Name, Image: cfg.Image, ImageID: imageID, State: model.StateCreated, CreatedAt: f.now()}
	if cfg.NetworkMode == "" {
		c.IP = fmt.Sprintf("172.17.%d.%d", f.seq/250%250, f.seq%250+2)
	}
	runtime.FillFromLabels(&c, labels)
	fc := &fakeContainer{c: c, cfg: *cfg}
	f.containers[id] = fc
	f.names[cfg.Name] = id
	f.emit(fc, "create")
	return id, nil
}

func (f *Runtime) StartContainer(ctx context.Context, id string) error {
	return f.start(id)
}

func (f *Runtime) start(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("StartContainer")
	fc, ok := f.containers[id]
	if !ok {
		return fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	if fc.c.Running() {
		return nil
	}
	if f.StartErr != nil {
		if err := f.StartErr(fc.cfg); err != nil {
			fc.c.ExitCode = 127
			fc.c.Error = err.Error()
			return err
		}
	}
	fc.c.State = model.StateRunning
	fc.c.StartedAt = f.now()
	fc.c.FinishedAt = time.Time{}
	fc.c.ExitCode = 0
	fc.c.Error = ""
	f.emit(fc, "start")
	return nil
}

// fakeImageID is the local ID the fake gives image.
func fakeImageID(image string) string { return "sha256:" + fmt.Sprintf("%x", image) }

func (f *Runtime) StopContainer(ctx context.Context, id string, grace time.Duration) error {
	f.mu.Lock()
	block := f.StopBlock
	f.mu.Unlock()
	if block != nil {
		select {
		case <-block: // a process that takes its grace period
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("StopContainer")
	fc, ok := f.containers[id]
	if !ok || fc.c.State != model.StateRunning {
		return nil
	}
	f.exitLocked(fc, 143) // SIGTERM, as for a process without a handler
	return nil
}

func (f *Runtime) exitLocked(fc *fakeContainer, code int) {
	fc.c.State = model.StateExited
	fc.c.ExitCode = code
	fc.c.FinishedAt = f.now()
	f.emit(fc, "die", "exitCode", fmt.Sprint(code))
}

// Exit makes a running container exit with code, as a crash or kill would.
func (f *Runtime) Exit(id string, code int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fc, ok := f.containers[id]; ok && fc.c.State == model.StateRunning {
		f.exitLocked(fc, code)
	}
}

// Emit sends an event for id, as the engine would for actions the fake does
// not model (exec_start, attach, ...).
func (f *Runtime) Emit(id, action string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fc, ok := f.containers[id]; ok {
		f.emit(fc, action)
	}
}

// BreakEvents fails every open event stream with err, as a dockerd restart
// would; subscribers must relist.
func (f *Runtime) BreakEvents(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, errs := range f.subErrs {
		select {
		case errs <- err:
		default:
		}
		delete(f.subErrs, id)
		delete(f.subs, id)
	}
}

// Subscribers returns the number of open event streams.
func (f *Runtime) Subscribers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}

// Remove deletes a container behind berth's back, as `docker rm -f` would.
func (f *Runtime) Remove(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removeLocked(id)
}

func (f *Runtime) RemoveContainer(ctx context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("RemoveContainer")
	f.removeLocked(id)
	return nil
}

// removeLocked kills (137) and destroys id if it exists; f.mu must be held.
func (f *Runtime) removeLocked(id string) {
	fc, ok := f.containers[id]
	if !ok {
		return
	}
	delete(f.containers, id)
	delete(f.names, fc.c.DockerName)
	if fc.c.Running() {
		f.exitLocked(fc, 137)
	}
	f.emit(fc, "destroy")
}

func (f *Runtime) InspectImage(ctx context.Context, image string) (runtime.ImageInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("InspectImage")
	id, ok := f.lookupImage(image)
	if !ok {
		return runtime.ImageInfo{}, fmt.Errorf("image %s: %w", image, runtime.ErrImageNotFound)
	}
	return runtime.ImageInfo{ID: id, Labels: f.imageLabels[image]}, nil
}

func (f *Runtime) CreateVolume(ctx context.Context, v runtime.VolumeConfig) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("CreateVolume")
	if _, ok := f.volumes[v.Name]; !ok {
		f.volumes[v.Name] = v
		f.volumeTimes[v.Name] = f.now()
	}
	return nil
}

func (f *Runtime) RemoveVolume(ctx context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("RemoveVolume")
	for _, fc := range f.containers {
		for _, m := range fc.cfg.Mounts {
			if m.Volume && m.Source == name {
				return fmt.Errorf("remove volume %s: %w by %s", name, runtime.ErrVolumeInUse, fc.c.DockerName)
			}
		}
	}
	delete(f.volumes, name)
	delete(f.volumeTimes, name)
	return nil
}

func (f *Runtime) ListVolumes(ctx context.Context, match map[string]string) ([]runtime.VolumeInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("ListVolumes")
	var out []runtime.VolumeInfo
	for n, v := range f.volumes {
		if matches(v.Labels, match) {
			out = append(out, runtime.VolumeInfo{Name: n, Labels: v.Labels, CreatedAt: f.volumeTimes[n]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Volumes returns the volumes that exist, by name.
func (f *Runtime) Volumes() map[string]runtime.VolumeConfig {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.volumes)
}

func (f *Runtime) PullImage(ctx context.Context, image string, creds *runtime.Credentials, progress func(runtime.PullProgress)) error {
	f.mu.Lock()
	block, steps := f.PullBlock, f.PullSteps
	f.mu.Unlock()
	for _, p := range steps {
		if progress != nil {
			progress(p)
		}
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("PullImage")
	if f.PullErr != nil {
		return f.PullErr
	}
	f.images[image] = true
	return nil
}

func (f *Runtime) BuildImage(ctx context.Context, tag, binary, path string, entrypoint []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("BuildImage")
	d, err := runtime.FileDigest(binary)
	if err != nil {
		return fmt.Errorf("build image %s: %w", tag, err)
	}
	size := int64(0)
	if st, err := os.Stat(binary); err == nil {
		size = st.Size()
	}
	f.builtLocked(tag, d, size, path, entrypoint)
	return nil
}

func (f *Runtime) BuildImageData(ctx context.Context, tag string, exe []byte, path string, entrypoint []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("BuildImageData")
	sum := sha256.Sum256(exe)
	f.builtLocked(tag, hex.EncodeToString(sum[:]), int64(len(exe)), path, entrypoint)
	return nil
}

func (f *Runtime) Events(ctx context.Context, match map[string]string) (<-chan runtime.Event, <-chan error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan runtime.Event, 1024)
	errs := make(chan error, 1)
	id := f.nsubs
	f.nsubs++
	f.subs[id] = ch
	f.subErrs[id] = errs
	out := make(chan runtime.Event, 1024)
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				f.mu.Lock()
				delete(f.subs, id)
				delete(f.subErrs, id)
				f.mu.Unlock()
				return
			case ev := <-ch:
				f.mu.Lock()
				fc, ok := f.containers[ev.ContainerID]
				keep := !ok || matches(fc.c.Labels, match)
				f.mu.Unlock()
				if !keep {
					continue
				}
				select {
				case out <- ev:
				case <-ctx.Done():
				}
			}
		}
	}()
	return out, errs
}

func (f *Runtime) Exec(ctx context.Context, id string, cmd []string) (int, []byte, error) {
	f.mu.Lock()
	f.call("Exec")
	fc, ok := f.containers[id]
	fn := f.ExecFunc
	running := ok && fc.c.State == model.StateRunning
	f.mu.Unlock()
	if !running {
		return 0, nil, fmt.Errorf("container %s not running: %w", id, runtime.ErrNotFound)
	}
	if fn == nil {
		return 0, nil, nil
	}
	return fn(id, cmd)
}

// Logs returns what SetLogs recorded for id.
func (f *Runtime) Logs(ctx context.Context, id string, opts runtime.LogOptions) (io.ReadCloser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("Logs")
	if _, ok := f.containers[id]; !ok {
		return nil, fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	return io.NopCloser(strings.NewReader(f.logs[id])), nil
}

// SetLogs sets the log text of a container.
func (f *Runtime) SetLogs(id, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs[id] = text
}
