// Package pauseimage pins the sandbox (pause) image by ID: berth's own
// program, checked by content and built when the tag lacks it, or a
// configured pod_infra_image as its tag held it when first needed.
package pauseimage

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/pause"
	"github.com/berth-dev/berth/runtime"
)

// Image is the sandbox image, pinned by ID: every sandbox is made
// from the ID, never from the tag, so an image put under the tag later (a
// pull, a `docker tag`) never becomes a sandbox. berth's own image is
// pinned once its content is checked, never by a label (any image can
// carry one), and its tag is looked at every pauseRecheckEvery to put it
// back when it moved; a configured pod_infra_image is pinned to the ID it
// resolved to when first needed, pulled if absent.
type Image struct {
	ref   string
	build *pause.Build
	rt    runtime.Runtime
	log   *slog.Logger

	// work serialises resolving, checking and building; mu guards id, so
	// a sandbox never waits for a recheck's build.
	work sync.Mutex
	mu   sync.Mutex
	id   string // "" until pinned
}

// New returns the image of reference ref, unpinned: built from build when
// the tag does not hold exactly its program, or pulled when build is nil.
func New(ref string, build *pause.Build, rt runtime.Runtime, log *slog.Logger) *Image {
	return &Image{ref: ref, build: build, rt: rt, log: log}
}

// pauseContentSlack is what berth's pause image may hold beyond its
// program's bytes before its export is refused unread.
const pauseContentSlack = 1 << 20

// errPauseInspect is wrapped when the pause image's tag could not be
// looked at (the engine did not answer).
var errPauseInspect = errors.New("cannot inspect the pause image")

// pauseRecheckEvery is how often the tag of berth's own pause image is
// looked at (one inspect) to put the image back when the tag moved.
const pauseRecheckEvery = 5 * time.Second

// ID returns the image ID to make a sandbox from, pinning one first: the
// image under the tag once its content is checked, else the one berth
// builds; a configured image as the tag has it, pulled when absent.
func (p *Image) ID(ctx context.Context) (string, error) {
	if id := p.Pinned(); id != "" {
		return id, nil
	}
	p.work.Lock()
	defer p.work.Unlock()
	if id := p.Pinned(); id != "" {
		return id, nil
	}
	if p.build == nil {
		id, err := p.resolveConfigured(ctx)
		if err != nil {
			return "", err
		}
		p.pin(id)
		return id, nil
	}
	if err := p.ensureBuilt(ctx); err != nil {
		return "", err
	}
	return p.Pinned(), nil
}

// Recheck looks at the tag of berth's own image once one is pinned and,
// when the tag holds another image, puts berth's back (ensureBuilt). A
// configured image stays pinned to what its tag held at first.
func (p *Image) Recheck(ctx context.Context) {
	p.work.Lock()
	defer p.work.Unlock()
	if p.build == nil || p.Pinned() == "" {
		return
	}
	// An engine that does not answer is reported by readiness, not here.
	if err := p.ensureBuilt(ctx); err != nil && ctx.Err() == nil && !errors.Is(err, errPauseInspect) {
		p.log.Warn("cannot put the pause image back under its tag; sandboxes keep the checked image", "image", p.ref, "pinned", p.Pinned(), "err", err)
	}
}

// ensureBuilt pins the image under the tag when it holds exactly berth's
// program, else builds it again (which puts berth's image back under the
// tag) and pins that. The pinned ID stays when this fails. Callers hold
// p.work.
func (p *Image) ensureBuilt(ctx context.Context) error {
	pinned, tagged := p.Pinned(), ""
	switch info, err := p.rt.InspectImage(ctx, p.ref); {
	case err == nil && info.ID == pinned:
		return nil
	case err == nil:
		tagged = info.ID
	case !errors.Is(err, runtime.ErrImageNotFound):
		return fmt.Errorf("%w: %w", errPauseInspect, err)
	}
	if pinned != "" {
		p.log.Warn("the pause image's tag no longer holds the checked image", "image", p.ref, "pinned", pinned, "tagged", tagged)
	}
	if tagged != "" {
		err := p.check(ctx, tagged)
		if err == nil {
			p.pin(tagged)
			return nil
		}
		p.log.Warn("the image under the pause tag is not berth's pause program; building it", "image", p.ref, "id", tagged, "why", err)
	}
	id, err := p.buildChecked(ctx)
	if err != nil {
		return err
	}
	p.pin(id)
	return nil
}

// Run calls Recheck every pauseRecheckEvery of clk until ctx ends.
func (p *Image) Run(ctx context.Context, clk clock.WithTicker) {
	t := clk.NewTicker(pauseRecheckEvery)
	defer t.Stop()
	p.rechecks(ctx, t.C())
}

// rechecks calls Recheck on each tick until ctx ends.
func (p *Image) rechecks(ctx context.Context, tick <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			p.Recheck(ctx)
		}
	}
}

// Pinned is the pinned ID ("" before the first sandbox).
func (p *Image) Pinned() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.id
}

// Forget unpins id: the engine no longer has it.
func (p *Image) Forget(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.id == id {
		p.id = ""
	}
}

func (p *Image) pin(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if id != p.id {
		p.log.Info("pause image pinned", "image", p.ref, "id", id)
	}
	p.id = id
}

// resolveConfigured is the ID of the configured image, pulled when absent.
func (p *Image) resolveConfigured(ctx context.Context) (string, error) {
	info, err := p.rt.InspectImage(ctx, p.ref)
	if errors.Is(err, runtime.ErrImageNotFound) {
		p.log.Info("pulling pause image", "image", p.ref)
		if err := p.rt.PullImage(ctx, p.ref, nil, nil); err != nil {
			return "", fmt.Errorf("pause image %s is absent and its pull failed: %w", p.ref, err)
		}
		info, err = p.rt.InspectImage(ctx, p.ref)
	}
	if err != nil {
		return "", fmt.Errorf("pause image %s: %w", p.ref, err)
	}
	return info.ID, nil
}

// buildChecked builds berth's image under the tag and returns its ID once
// its content is checked.
func (p *Image) buildChecked(ctx context.Context) (string, error) {
	b := p.build
	p.log.Info("building pause image", "image", p.ref, "bytes", len(b.Exe), "from", b.Binary)
	var err error
	if b.Exe != nil {
		err = p.rt.BuildImageData(ctx, p.ref, b.Exe, b.Path, b.Entrypoint)
	} else {
		err = p.rt.BuildImage(ctx, p.ref, b.Binary, b.Path, b.Entrypoint)
	}
	if err != nil {
		return "", fmt.Errorf("build pause image %s: %w", p.ref, err)
	}
	info, err := p.rt.InspectImage(ctx, p.ref)
	if err != nil {
		return "", fmt.Errorf("pause image %s after its build: %w", p.ref, err)
	}
	if err := p.check(ctx, info.ID); err != nil {
		return "", fmt.Errorf("pause image %s after its build: %w", p.ref, err)
	}
	return info.ID, nil
}

// check reads image id's content and says why it is not berth's pause
// image, if it is not.
func (p *Image) check(ctx context.Context, id string) error {
	size := int64(len(p.build.Exe))
	if p.build.Exe == nil {
		st, err := os.Stat(p.build.Binary)
		if err != nil {
			return err
		}
		size = st.Size()
	}
	content, err := p.rt.ImageContent(ctx, id, size+pauseContentSlack)
	if err != nil {
		return err
	}
	if content.ID != id {
		return fmt.Errorf("read the content of %s, not of %s", content.ID, id)
	}
	return pauseContentMismatch(content, p.build)
}

// pauseContentMismatch says how content differs from the image b builds:
// one layer holding only the program at b.Path (b.Digest, executable, no
// set-ID bit), and a config that runs it as b.Entrypoint and nothing else.
// nil when it does not.
func pauseContentMismatch(content runtime.ImageContent, b *pause.Build) error {
	if len(content.Layers) != 1 || len(content.Layers[0].Entries) != 1 {
		n := 0
		for _, l := range content.Layers {
			n += len(l.Entries)
		}
		return fmt.Errorf("%d layers holding %d entries, want one layer holding the program", len(content.Layers), n)
	}
	e := content.Layers[0].Entries[0]
	switch {
	case e.Type != tar.TypeReg || e.Name != strings.TrimPrefix(b.Path, "/"):
		return fmt.Errorf("its one entry is %q (type %q), want the file %s", e.Name, e.Type, b.Path)
	case e.Digest != b.Digest:
		return fmt.Errorf("%s has sha256 %s, want the program's %s", b.Path, e.Digest, b.Digest)
	case e.Mode&0o111 == 0 || e.Mode&0o6000 != 0:
		return fmt.Errorf("%s has mode %o, want executable without set-ID bits", b.Path, e.Mode)
	}
	c := content.Config
	switch {
	case !slices.Equal(c.Entrypoint, b.Entrypoint) || len(c.Cmd) != 0:
		return fmt.Errorf("it runs %q %q, want %q", c.Entrypoint, c.Cmd, b.Entrypoint)
	case c.User != "" || (c.WorkingDir != "" && c.WorkingDir != "/") || c.StopSignal != "":
		return fmt.Errorf("its config sets user %q, working directory %q, stop signal %q", c.User, c.WorkingDir, c.StopSignal)
	case len(c.Volumes) != 0 || len(c.OnBuild) != 0 || (len(c.Healthcheck) != 0 && !slices.Equal(c.Healthcheck, []string{"NONE"})):
		return fmt.Errorf("its config sets volumes %q, onbuild %q, health check %q", c.Volumes, c.OnBuild, c.Healthcheck)
	}
	for _, kv := range c.Env {
		if !strings.HasPrefix(kv, "PATH=") {
			return fmt.Errorf("its config sets %s", kv)
		}
	}
	return nil
}
