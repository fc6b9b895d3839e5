package main

// The ledger: what the pods directory declares, as the harness wrote it.
// Every declared pod has a generation, carried in its app container's
// environment (SOAK_GEN), which rises whenever its spec changes or it is
// added again after a delete; operations that keep the spec (a rename, a
// same-content replace or rewrite) keep it. So a container whose
// replacement runs the same generation was restarted for nothing.

import (
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"
)

// podState is one pod ever declared by this run, deleted or not.
type podState struct {
	name  string
	file  string // base name in the pods dir; "" while deleted
	gen   int
	grace int
	// lastChange is when its spec or presence last changed (edit, changed
	// replace, delete, add); lastOp when any operation last touched its file.
	lastChange, lastOp time.Time
	lastOpKind         string
	// readds are the generations at which it was added again after a
	// delete (a new sandbox is then right).
	readds []int
	// hold keeps the churn off the pod: the target of a live duplicate, or
	// a deleted pod whose containers a kill check is watching go.
	hold bool
}

// ledger is safe for concurrent use; the churn holds mu across a file
// operation and its entry, so a snapshot never sees one without the other.
type ledger struct {
	mu     sync.Mutex
	prefix string
	pods   map[string]*podState
	next   int // index of the next new pod
	// lastFileChange is the time of the last change to the directory,
	// hostile files included.
	lastFileChange time.Time
	ops            map[string]int // operations done, by kind
}

func newLedger(prefix string) *ledger {
	return &ledger{prefix: prefix, pods: map[string]*podState{}, ops: map[string]int{}}
}

// newPod registers a new pod (not yet written).
func (l *ledger) newPod() *podState {
	i := l.next
	l.next++
	p := &podState{name: fmt.Sprintf("%s-%03d", l.prefix, i), gen: 1, grace: 1 + i%2}
	p.file = p.name + ".yaml"
	l.pods[p.name] = p
	return p
}

// podYAML is a pod as users write them: one app container running
// `testapp sleep`, which exits at once on SIGTERM. gen goes into its
// environment (a change of it restarts the app, as any env change does).
func podYAML(name string, grace int, gen string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: %d
  containers:
    - name: app
      image: %q
      args: ["sleep"]
      env:
        - name: SOAK_GEN
          value: %q
`, name, grace, testImage, gen)
}

func (p *podState) content() string { return podYAML(p.name, p.grace, strconv.Itoa(p.gen)) }

// podView is a pod's entry in a snapshot.
type podView struct {
	declared           bool
	gen                int
	lastChange, lastOp time.Time
	lastOpKind         string
	readds             []int
}

// snapshot copies the ledger: every pod ever declared, by name.
func (l *ledger) snapshot() map[string]podView {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]podView, len(l.pods))
	for n, p := range l.pods {
		out[n] = podView{declared: p.file != "", gen: p.gen, lastChange: p.lastChange, lastOp: p.lastOp, lastOpKind: p.lastOpKind,
			readds: append([]int(nil), p.readds...)}
	}
	return out
}

// declaredCount counts the declared pods (caller holds mu).
func (l *ledger) declaredCount() int {
	n := 0
	for _, p := range l.pods {
		if p.file != "" {
			n++
		}
	}
	return n
}

// pick returns a random pod (caller holds mu) for which want holds, nil if
// none; in name order first so a seed replays the same run.
func (s *soak) pick(want func(*podState) bool) *podState {
	var c []*podState
	for _, p := range s.led.pods {
		if !p.hold && want(p) {
			c = append(c, p)
		}
	}
	if len(c) == 0 {
		return nil
	}
	sort.Slice(c, func(i, j int) bool { return c[i].name < c[j].name })
	return c[s.rng.IntN(len(c))]
}

func declared(p *podState) bool { return p.file != "" }
func deleted(p *podState) bool  { return p.file == "" }
