package informer

import (
	"context"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/admission"
	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/sources"
	"github.com/berth-dev/berth/store"
)

// SourceInformer applies source updates to the store's desired pods, each
// decided by admission and written in one store transaction.
type SourceInformer struct {
	store   *store.Store
	clock   clock.PassiveClock
	metrics Metrics
	log     *slog.Logger
	// Node is the node pods must fit (admission.Update.Node); set before
	// Run, nil checks nothing.
	Node *admission.Node
	// Events, when set (before Run), gets a Warning event for a manifest
	// refused and a failed read, as the limits in refusalevents.go allow
	// (new ones at once, a few per update, repeats every RefusalResend;
	// the store aggregates the repeats); NodeName names the node such
	// events are about when no stored pod of the source is.
	Events   events.Recorder
	NodeName string
	mu       sync.Mutex
	// lastErrs is the previous error set per source, to count new errors
	// once; recorded is what each source's events recorded. Guarded by mu.
	lastErrs map[string]map[string]bool
	recorded map[string]*sourceEvents
	// applyMu orders Applies; last is what each source's last one applied.
	applyMu sync.Mutex
	last    map[string]*applied
	partial int // updates decided by their difference, for tests
}

// NewSourceInformer returns an informer writing to st.
func NewSourceInformer(st *store.Store, clk clock.PassiveClock, m Metrics, log *slog.Logger) *SourceInformer {
	if m == nil {
		m = noMetrics{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &SourceInformer{store: st, clock: clk, metrics: m, log: log.With("component", "source-informer"), lastErrs: map[string]map[string]bool{},
		recorded: map[string]*sourceEvents{}, last: map[string]*applied{}}
}

// Register records a configured source as not yet synced, so that nothing it
// owns is deleted before its first complete update. Call before Run.
func (i *SourceInformer) Register(name string) error {
	if cur, _ := i.store.Source(nil, name); cur != nil {
		return nil
	}
	return i.store.UpsertSource(&model.Source{Name: name})
}

// Run applies updates until ctx ends or updates is closed.
func (i *SourceInformer) Run(ctx context.Context, updates <-chan sources.Update) {
	for {
		select {
		case <-ctx.Done():
			return
		case u, ok := <-updates:
			if !ok {
				return
			}
			if err := i.Apply(u); err != nil {
				i.log.Error("applying source update", "source", u.Source, "err", err)
			}
		}
	}
}

// Apply makes the store's pods of u.Source match u, as admission decides
// in the store's write transaction. Pods whose update was refused keep
// their last good spec; pods from an origin that failed to decode as a
// whole are kept as they were. When the source's previous update was
// admitted whole and u differs from it only in some pods (the others sent
// as the same objects), only those are decided and written
// (admission.AdmitChanged), so an update costs what changed: admission
// reads what the other pods hold from the store's indexes. When it differs
// only in some ConfigMaps and Secrets (the same pods), only those are
// decided and written (admission.AdmitObjectsChanged), so an update costs
// what changed plus a pointer compare per object. Safe for concurrent use.
func (i *SourceInformer) Apply(u sources.Update) error {
	_, err := i.ApplyResult(u)
	return err
}

// ApplyResult is Apply, returning what admission refused of u, by pod key
// and object ref: a source that writes one object and waits for its
// verdict (the push source) reads it here, in the same call. Its events
// are recorded after the next Apply may start.
func (i *SourceInformer) ApplyResult(u sources.Update) (sources.Applied, error) {
	now := i.clock.Now()
	if u.Err != nil {
		return sources.Applied{}, i.failed(u.Source, u.Err)
	}
	i.applyMu.Lock()
	res, due, err := i.apply(u, now)
	i.applyMu.Unlock()
	if err != nil {
		return sources.Applied{}, err
	}
	i.recordAll(u.Source, due, now)
	return res, nil
}

// apply is ApplyResult's write, returning the events to record; applyMu
// held.
func (i *SourceInformer) apply(u sources.Update, now time.Time) (sources.Applied, []refusal, error) {
	var changed, changedObjs []int
	var removed, removedObjs []string
	delta, objDelta := false, false
	if prev := i.last[u.Source]; prev != nil && prev.whole && len(u.Errors) == 0 {
		switch {
		case sameObjects(prev.objects, u.Objects):
			changed, removed, delta = podDelta(prev.pods, u.Pods)
		case samePods(prev.pods, u.Pods):
			changedObjs, removedObjs, objDelta = objectDelta(prev.objects, u.Objects)
		}
	}
	delete(i.last, u.Source)
	var errs []string
	var refused map[string]string
	warns := map[string]bool{}
	whole := false
	err := i.store.ApplySource(u.Source, func(v store.View) (store.SourceWrite, error) {
		au := admission.Update{Source: u.Source, Pods: u.Pods, Objects: u.Objects, Errors: u.Errors, Now: now, Node: i.Node}
		w := store.SourceWrite{}
		var refusals, podWarns []string
		decided := false
		if delta {
			c, ok, err := admission.AdmitChanged(v, au, changed, removed)
			if err != nil {
				return store.SourceWrite{}, err
			}
			if ok {
				i.partial++
				w, decided = store.SourceWrite{Partial: true, Pods: c.Pods, Removed: c.Removed}, true
				refusals, podWarns, refused = c.Errors, c.Warnings, c.Refused
			}
		}
		if objDelta {
			c, ok, err := admission.AdmitObjectsChanged(v, au, changedObjs, removedObjs)
			if err != nil {
				return store.SourceWrite{}, err
			}
			if ok {
				i.partial++
				w, decided = store.SourceWrite{Partial: true, Objects: c.Objects, RemovedObjects: c.Removed}, true
				refusals, refused = c.Errors, c.Refused
			}
		}
		if !decided {
			d, err := admission.Admit(v, au)
			if err != nil {
				return store.SourceWrite{}, err
			}
			w = store.SourceWrite{Pods: d.Pods, Objects: d.Objects}
			refusals, podWarns, refused = d.Errors, d.Warnings, d.Refused
		}
		whole = len(refusals) == 0 && len(podWarns) == 0
		for _, w := range podWarns {
			warns[w] = true
		}
		errs = append(append(refusals, podWarns...), u.Warnings...)
		sort.Strings(errs)
		ns := &model.Source{Name: u.Source}
		if src, err := v.Source(u.Source); err != nil {
			return store.SourceWrite{}, err
		} else if src != nil {
			cp := *src
			ns = &cp
		}
		ns.Synced, ns.LastSync, ns.LastError = true, now, ""
		ns.Updates++
		ns.Errors = errs
		ns.Refusals = append([]string(nil), refusals...)
		sort.Strings(ns.Refusals)
		w.Source = ns
		return w, nil
	})
	if err != nil {
		return sources.Applied{}, nil, err
	}
	i.last[u.Source] = &applied{pods: u.Pods, objects: u.Objects, whole: whole}

	i.mu.Lock()
	cur := map[string]bool{}
	fresh := 0
	srcWarns := map[string]bool{}
	for _, w := range u.Warnings {
		srcWarns[w] = true
	}
	for _, e := range errs {
		cur[e] = true
		switch {
		case i.lastErrs[u.Source][e]:
		case warns[e]:
			i.log.Warn("pod admitted with a warning", "source", u.Source, "warning", e)
		case srcWarns[e]:
			// A condition of the source (a skipped file, a Secret others
			// may read), not a rejected manifest.
			i.log.Warn("source warning", "source", u.Source, "warning", e)
		default:
			fresh++
			i.log.Warn("manifest rejected", "source", u.Source, "err", e)
		}
	}
	i.lastErrs[u.Source] = cur
	var due []refusal
	if i.Events != nil {
		due = i.dueRefusals(u.Source, refusals(u, refused), now)
	}
	i.mu.Unlock()
	if fresh > 0 {
		i.metrics.ManifestErrors(u.Source, fresh)
	}
	i.metrics.SourceUpdate(u.Source, now)
	return sources.Applied{Refused: refused}, due, nil
}

// failed records a read failure of a source: its pods stay as they are.
func (i *SourceInformer) failed(source string, err error) error {
	i.metrics.SourceError(source)
	i.log.Warn("source unreadable; keeping its last good pods", "source", source, "err", err)
	ns := &model.Source{Name: source}
	if src, _ := i.store.Source(nil, source); src != nil {
		cp := *src
		ns = &cp
	}
	ns.LastError = err.Error()
	now := i.clock.Now()
	msg := source + " source: " + stableError(err)
	i.mu.Lock()
	due := i.Events != nil && i.readFailureDue(source, msg, now)
	i.mu.Unlock()
	if due {
		i.record(source, "", events.Warning, ReasonSourceUnreadable, msg, now)
	}
	return i.store.UpsertSource(ns)
}

// The reasons of the source informer's events.
const (
	// ReasonInvalidManifest: a manifest did not decode or validate; the
	// message names its origin, the object and the field.
	ReasonInvalidManifest = "InvalidManifest"
	// ReasonManifestRefused: admission refused a manifest (a host port or
	// key another pod holds, the node does not fit it, ...).
	ReasonManifestRefused = "ManifestRefused"
	// ReasonSourceUnreadable: the source could not be read; its pods stay.
	ReasonSourceUnreadable = "SourceUnreadable"
)

// record records an event of source about the stored pod podKey when it
// is the source's (a refused change of a pod that runs on its last good
// spec: kubectl describe pod shows why), else about the node: a manifest
// that never became a pod, or another source's pod, whose events are not
// this source's to write to.
func (i *SourceInformer) record(source, podKey, typ, reason, msg string, now time.Time) {
	if i.Events == nil {
		return
	}
	e := events.Event{Time: now, Namespace: "default", Node: i.NodeName, Source: source, Type: typ, Reason: reason, Message: msg}
	if podKey != "" {
		if p, _ := i.store.Pod(nil, podKey); p != nil && p.Source == source && p.Spec != nil {
			ns, name, _ := strings.Cut(podKey, "/")
			e.Namespace, e.Pod, e.PodUID, e.Node = ns, name, string(p.Spec.UID), ""
		}
	}
	if e.Node == "" && e.Pod == "" {
		return // no node named: nothing the event could be about
	}
	i.Events.Record(e)
}
