package runtime

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/docker/docker/api/types/events"
)

// Events streams lifecycle events of containers carrying all labels in
// match. The event channel is closed when the stream ends; if it ended
// because the engine stream broke (not because ctx ended), the error channel
// yields that one error first.
func (d *Docker) Events(ctx context.Context, match map[string]string) (<-chan Event, <-chan error) {
	args := labelFilters(match)
	args.Add("type", string(events.ContainerEventType))
	msgs, derrs := d.cli.Events(ctx, events.ListOptions{Filters: args})

	out := make(chan Event)
	errs := make(chan error, 1)
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case err, ok := <-derrs:
				if ctx.Err() != nil {
					return
				}
				if !ok || err == nil {
					err = io.ErrUnexpectedEOF
				}
				errs <- fmt.Errorf("docker events: %w", err)
				return
			case m := <-msgs:
				action := string(m.Action)
				if i := strings.Index(action, ":"); i >= 0 {
					action = action[:i] // "exec_start: sh -c ..." → "exec_start"
				}
				ev := Event{ContainerID: m.Actor.ID, Action: action, Time: time.Unix(0, m.TimeNano), Attributes: m.Actor.Attributes}
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, errs
}
