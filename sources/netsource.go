package sources

import (
	"context"
	"time"

	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/manifest"
)

// send delivers u on out unless ctx ends first; it reports whether u was
// taken.
func send(ctx context.Context, out chan<- Update, u Update) bool {
	select {
	case out <- u:
		return true
	case <-ctx.Done():
		return false
	}
}

// sleepCtx waits d, or less when ctx ends; it reports whether ctx is still
// live.
func sleepCtx(ctx context.Context, clk clock.Clock, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// cloneUpdate returns u with its own copies of the pods, so that an update
// sent again (HTTP 304, etcd snapshots built from cached decodes) never
// shares a *v1.Pod with one the consumer may already hold.
func cloneUpdate(u Update) Update {
	cp := u
	if u.Pods != nil {
		cp.Pods = make([]manifest.Desired, len(u.Pods))
		for i, d := range u.Pods {
			cp.Pods[i] = manifest.Desired{Pod: d.Pod.DeepCopy(), Origin: d.Origin}
		}
	}
	if u.Objects != nil {
		cp.Objects = make([]manifest.Object, len(u.Objects))
		for i, o := range u.Objects {
			cp.Objects[i] = o.DeepCopy()
		}
	}
	if u.Errors != nil {
		cp.Errors = append([]manifest.ManifestError(nil), u.Errors...)
	}
	if u.Warnings != nil {
		cp.Warnings = append([]string(nil), u.Warnings...)
	}
	return cp
}
