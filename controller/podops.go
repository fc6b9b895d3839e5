package controller

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
)

// podOps runs at most one background operation per pod key beside the
// workers, like the kubelet's pod workers: stops that take a grace period
// and postStart hooks never hold a worker. While a key's operation runs the
// key is busy and its reconciles do nothing; when it ends, busy is cleared
// first, the key enqueued second, so the reconcile that this wakeup causes
// is never turned away as busy, and the key's idle channel closed last.
type podOps struct {
	mu sync.Mutex
	// running holds, per busy key, the channel closed when its operation
	// has ended.
	running map[string]chan struct{}
	wg      sync.WaitGroup
	// done is called with the key after its operation ended.
	done func(key string)
	log  *slog.Logger
}

func newPodOps(done func(string), log *slog.Logger) *podOps {
	return &podOps{running: map[string]chan struct{}{}, done: done, log: log}
}

// closed is the idle channel of a key with no operation.
var closed = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// busy reports whether key has an operation running.
func (o *podOps) busy(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.running[key] != nil
}

// idle returns a channel closed once the operation key has running now
// (if any) ended and its key was enqueued; it is closed already when none
// runs. An operation started later has a channel of its own.
func (o *podOps) idle(key string) <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ch := o.running[key]; ch != nil {
		return ch
	}
	return closed
}

// start runs op for key in the background and reports true, unless key has
// one running (false). A panic in op is logged and ends op.
func (o *podOps) start(ctx context.Context, key string, op func(ctx context.Context)) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.running[key] != nil {
		return false
	}
	ended := make(chan struct{})
	o.running[key] = ended
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		defer func() {
			if r := recover(); r != nil {
				o.log.Error("pod operation panicked", "pod", key, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			}
			o.mu.Lock()
			delete(o.running, key)
			o.mu.Unlock()
			o.done(key)
			close(ended)
		}()
		op(ctx)
	}()
	return true
}

// wait blocks until every running operation has ended.
func (o *podOps) wait() { o.wg.Wait() }
