package fake

import (
	"context"

	"github.com/berth-dev/berth/runtime"
)

func (f *eventFake) Events(ctx context.Context, match map[string]string) (<-chan runtime.Event, <-chan error) {
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

// Emit sends an event for id, as the engine would for actions the fake does
// not model (exec_start, attach, ...).
func (f *eventFake) Emit(id, action string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fc, ok := f.containers[id]; ok {
		f.emit(fc, action)
	}
}

// BreakEvents fails every open event stream with err, as a dockerd restart
// would; subscribers must relist.
func (f *eventFake) BreakEvents(err error) {
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
func (f *eventFake) Subscribers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}
