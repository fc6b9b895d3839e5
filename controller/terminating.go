package controller

import "sync"

// terminations tracks pods being stopped in the background, so that no
// reconcile acts on a pod while its containers are going away.
type terminations struct {
	mu   sync.Mutex
	keys map[string]bool
	wg   sync.WaitGroup
}

func newTerminations() *terminations { return &terminations{keys: map[string]bool{}} }

// busy reports whether key is being terminated.
func (t *terminations) busy(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.keys[key]
}

// start runs kill for key in the background unless one runs already.
func (t *terminations) start(key string, kill func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.keys[key] {
		return
	}
	t.keys[key] = true
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer func() {
			t.mu.Lock()
			delete(t.keys, key)
			t.mu.Unlock()
		}()
		kill()
	}()
}

// wait blocks until every running termination has ended.
func (t *terminations) wait() { t.wg.Wait() }
