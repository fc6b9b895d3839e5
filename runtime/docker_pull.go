package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/registry"
	"github.com/docker/docker/pkg/jsonmessage"
)

// PullImage pulls img from its registry, logging in with creds' login for
// its registry, else docker.config's, reading the progress stream to the
// end and reporting each change to progress (nil: none); an error reported
// in the stream fails the pull.
func (d *dockerImages) PullImage(ctx context.Context, img string, creds *Credentials, progress func(PullProgress)) error {
	var opts image.PullOptions
	if auth, ok := creds.Merge(d.creds).For(img); ok {
		enc, err := registry.EncodeAuthConfig(auth)
		if err != nil {
			return fmt.Errorf("pull image %s: credentials: %w", img, err)
		}
		opts.RegistryAuth = enc
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rc, err := d.cli.ImagePull(ctx, img, opts)
	if err != nil {
		return fmt.Errorf("pull image %s: %w", img, err)
	}
	defer rc.Close()
	// A registry that stops sending (a stalled transfer) fails the pull
	// after PullStall without progress, so it backs off and is retried.
	stalled := time.AfterFunc(PullStall, cancel)
	defer stalled.Stop()
	var tracker pullTracker
	onMessage := func(msg *jsonmessage.JSONMessage) {
		if tracker.add(msg) && progress != nil {
			progress(tracker.progress())
		}
	}
	if err := readJSONMessages(&progressReader{r: rc, progress: func() { stalled.Reset(PullStall) }}, onMessage); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("pull image %s: no progress for %s", img, PullStall)
		}
		return fmt.Errorf("pull image %s: %w", img, err)
	}
	return nil
}

// PullStall is how long a pull may go without any progress message.
var PullStall = 2 * time.Minute

// progressReader calls progress on every read that returns data.
type progressReader struct {
	r        io.Reader
	progress func()
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.progress()
	}
	return n, err
}

// drainJSONMessages reads a JSON message stream (pull, build) to its end and
// returns the first error it reports.
func drainJSONMessages(r io.Reader) error { return readJSONMessages(r, nil) }

// readJSONMessages is drainJSONMessages that also hands every message to
// each (nil: none).
func readJSONMessages(r io.Reader, each func(*jsonmessage.JSONMessage)) error {
	dec := json.NewDecoder(r)
	for {
		var msg jsonmessage.JSONMessage
		if err := dec.Decode(&msg); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading engine stream: %w", err)
		}
		if msg.Error != nil {
			return msg.Error
		}
		//lint:ignore SA1019 older engines set only this
		if msg.ErrorMessage != "" {
			//lint:ignore SA1019 older engines set only this
			return errors.New(msg.ErrorMessage)
		}
		if each != nil {
			each(&msg)
		}
	}
}
