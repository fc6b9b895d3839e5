package fake

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

type fakeContainer struct {
	c   model.Container
	cfg runtime.ContainerConfig
}

func (f *containerFake) ListContainers(ctx context.Context, match map[string]string) ([]*model.Container, error) {
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

func (f *containerFake) InspectContainer(ctx context.Context, id string) (*model.Container, error) {
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
func (f *containerFake) Config(id string) (runtime.ContainerConfig, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fc, ok := f.containers[id]
	if !ok {
		return runtime.ContainerConfig{}, false
	}
	return fc.cfg, true
}

func (f *containerFake) CreateContainer(ctx context.Context, cfg *runtime.ContainerConfig) (string, error) {
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

func (f *containerFake) StartContainer(ctx context.Context, id string) error {
	return f.start(id)
}

func (f *containerFake) start(id string) error {
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

func (f *containerFake) StopContainer(ctx context.Context, id string, grace time.Duration) error {
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

func (f *containerFake) exitLocked(fc *fakeContainer, code int) {
	fc.c.State = model.StateExited
	fc.c.ExitCode = code
	fc.c.FinishedAt = f.now()
	f.emit(fc, "die", "exitCode", fmt.Sprint(code))
}

// Exit makes a running container exit with code, as a crash or kill would.
func (f *containerFake) Exit(id string, code int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fc, ok := f.containers[id]; ok && fc.c.State == model.StateRunning {
		f.exitLocked(fc, code)
	}
}

// Remove deletes a container behind berth's back, as `docker rm -f` would.
func (f *containerFake) Remove(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removeLocked(id)
}

func (f *containerFake) RemoveContainer(ctx context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("RemoveContainer")
	f.removeLocked(id)
	return nil
}

// removeLocked kills (137) and destroys id if it exists; f.mu must be held.
func (f *containerFake) removeLocked(id string) {
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
