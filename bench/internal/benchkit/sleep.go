package benchkit

import (
	"context"
	"time"
)

// SleepCtx waits d, or until ctx ends and then returns ctx's error.
func SleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
