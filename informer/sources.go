package informer

import (
	"context"
	"fmt"
	"log/slog"
	"sort"

	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/sources"
	"github.com/berth-dev/berth/store"
)

// SourceInformer applies source updates to the store's desired pods. It is
// the single writer of desired pods, so conflict checks need no locking.
type SourceInformer struct {
	store   *store.Store
	clock   clock.PassiveClock
	metrics Metrics
	log     *slog.Logger
	// lastErrs is the previous error set per source, to count new errors once.
	lastErrs map[string]map[string]bool
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
	return &SourceInformer{store: st, clock: clk, metrics: m, log: log.With("component", "source-informer"), lastErrs: map[string]map[string]bool{}}
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

type hostPort struct {
	ip    string
	proto v1.Protocol
	port  int32
}

func hostPorts(p *v1.Pod) []hostPort {
	var out []hostPort
	for _, c := range p.Spec.Containers {
		for _, port := range c.Ports {
			if port.HostPort == 0 && !p.Spec.HostNetwork {
				continue
			}
			hp := port.HostPort
			if p.Spec.HostNetwork && hp == 0 {
				hp = port.ContainerPort
			}
			ip := port.HostIP
			if ip == "" {
				ip = "0.0.0.0"
			}
			out = append(out, hostPort{ip, port.Protocol, hp})
		}
	}
	return out
}

// portClaims are the host ports held by accepted pods.
type portClaims []portClaim

type portClaim struct {
	key string
	hp  hostPort
}

// add records the host ports of pod key.
func (c *portClaims) add(key string, p *v1.Pod) {
	for _, hp := range hostPorts(p) {
		*c = append(*c, portClaim{key, hp})
	}
}

// clash describes the first port of p (pod key) that another pod holds, or
// returns "".
func (c portClaims) clash(key string, p *v1.Pod) string {
	for _, hp := range hostPorts(p) {
		for _, t := range c {
			if t.key != key && conflicts(hp, t.hp) {
				return fmt.Sprintf("spec.containers[].ports: hostPort %d/%s on %s already used by pod %s", hp.port, hp.proto, hp.ip, t.key)
			}
		}
	}
	return ""
}

func conflicts(a hostPort, b hostPort) bool {
	return a.port == b.port && a.proto == b.proto && (a.ip == b.ip || a.ip == "0.0.0.0" || b.ip == "0.0.0.0")
}

// Apply makes the store's pods of u.Source match u. Pods whose update was
// rejected keep their last good spec; pods from an origin that failed to
// decode as a whole are kept as they were.
func (i *SourceInformer) Apply(u sources.Update) error {
	now := i.clock.Now()
	if u.Err != nil {
		return i.failed(u.Source, u.Err)
	}
	existing, err := i.store.PodsBySource(nil, u.Source)
	if err != nil {
		return err
	}
	have := map[string]*model.Pod{}
	for _, p := range existing {
		have[p.Key] = p
	}
	failedOrigin := map[string]bool{}
	podErr := map[string]string{}
	var errs []string
	for _, e := range u.Errors {
		errs = append(errs, e.Error())
		if e.PodKey == "" {
			failedOrigin[e.Origin] = true
		} else {
			podErr[e.PodKey] = e.Error()
		}
	}

	// Ports held by other sources' pods, then by this source's accepted pods.
	var taken portClaims
	all, err := i.store.Pods(nil)
	if err != nil {
		return err
	}
	// UIDs name pod directories on the host: one pod each.
	uids := map[types.UID]string{}
	for _, p := range all {
		if p.Source != u.Source {
			taken.add(p.Key, p.Spec)
			uids[p.Spec.UID] = p.Key
		}
	}

	// Pods kept on their last good spec (their update failed) keep their
	// ports too, so a newcomer cannot take them meanwhile.
	offered := map[string]bool{}
	for _, d := range u.Pods {
		offered[podKey(d.Pod)] = true
	}
	for key, old := range have {
		if _, bad := podErr[key]; (bad || failedOrigin[old.Origin]) && !offered[key] {
			taken.add(key, old.Spec)
			uids[old.Spec.UID] = key
		}
	}

	reject := func(d manifest.Desired, key, msg string) {
		e := manifest.ManifestError{Origin: d.Origin, PodKey: key, Err: msg}
		errs = append(errs, e.Error())
		podErr[key] = e.Error()
	}
	// Existing pods are checked first: an accepted pod keeps its ports
	// against newcomers of the same source.
	ordered := append([]manifest.Desired(nil), u.Pods...)
	sort.SliceStable(ordered, func(a, b int) bool {
		_, ea := have[podKey(ordered[a].Pod)]
		_, eb := have[podKey(ordered[b].Pod)]
		return ea && !eb
	})
	next := map[string]*model.Pod{}
	for _, d := range ordered {
		key := podKey(d.Pod)
		if _, dup := next[key]; dup {
			reject(d, key, "duplicate pod key in source")
			continue
		}
		if other, _ := i.store.Pod(nil, key); other != nil && other.Source != u.Source {
			reject(d, key, fmt.Sprintf("pod already provided by source %q", other.Source))
			continue
		}
		if holder := i.heldBy(key, u.Source); holder != "" {
			reject(d, key, fmt.Sprintf("pod is running for source %q, which has not synced since berth started", holder))
			continue
		}
		if clash := taken.clash(key, d.Pod); clash != "" {
			reject(d, key, clash)
			continue
		}
		if owner, used := uids[d.Pod.UID]; used && owner != key {
			reject(d, key, fmt.Sprintf("metadata.uid: %s is already the uid of pod %s", d.Pod.UID, owner))
			continue
		}
		uids[d.Pod.UID] = key
		taken.add(key, d.Pod)
		next[key] = i.merge(have[key], u.Source, d, now)
	}
	// Keep the last good spec of pods whose update failed.
	for key, old := range have {
		if _, ok := next[key]; ok {
			continue
		}
		if msg, bad := podErr[key]; bad {
			next[key] = withError(old, msg)
		} else if failedOrigin[old.Origin] {
			next[key] = old
		}
	}
	for key, p := range next {
		if msg, bad := podErr[key]; bad && p.Error != msg {
			next[key] = withError(p, msg)
		} else if !bad && p.Error != "" {
			next[key] = withError(p, "")
		}
	}
	pods := make([]*model.Pod, 0, len(next))
	for _, p := range next {
		pods = append(pods, p)
	}
	if err := i.store.ReplaceSourcePods(u.Source, pods); err != nil {
		return err
	}

	errs = append(errs, u.Warnings...)
	sort.Strings(errs)
	cur := map[string]bool{}
	fresh := 0
	for _, e := range errs {
		cur[e] = true
		if !i.lastErrs[u.Source][e] {
			fresh++
			i.log.Warn("manifest rejected", "source", u.Source, "err", e)
		}
	}
	i.lastErrs[u.Source] = cur
	if fresh > 0 {
		i.metrics.ManifestErrors(u.Source, fresh)
	}
	src, _ := i.store.Source(nil, u.Source)
	ns := &model.Source{Name: u.Source}
	if src != nil {
		cp := *src
		ns = &cp
	}
	ns.Synced = true
	ns.LastSync = now
	ns.LastError = ""
	ns.Updates++
	ns.Errors = errs
	if err := i.store.UpsertSource(ns); err != nil {
		return err
	}
	i.metrics.SourceUpdate(u.Source, now)
	return nil
}

func podKey(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// merge returns the stored pod for desired d: the old object when nothing
// changed, else a new one carrying over status for the same UID.
func (i *SourceInformer) merge(old *model.Pod, source string, d manifest.Desired, now time.Time) *model.Pod {
	if old != nil && old.Origin == d.Origin && (old.Spec == d.Pod || equality.Semantic.DeepEqual(old.Spec, d.Pod)) {
		return old
	}
	p := &model.Pod{Key: podKey(d.Pod), Source: source, Origin: d.Origin, Spec: d.Pod, SeenAt: now}
	if old != nil && old.Spec.UID == d.Pod.UID {
		return p.WithObserved(old)
	}
	return p
}

func withError(p *model.Pod, msg string) *model.Pod {
	cp := *p
	cp.Error = msg
	return &cp
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
	return i.store.UpsertSource(ns)
}

// heldBy names another, not yet synced source whose containers run pod key:
// after a restart the source that ran a pod keeps its claim until it synced,
// whichever source happens to answer first.
func (i *SourceInformer) heldBy(key, source string) string {
	ctrs, _ := i.store.ContainersByPod(nil, key)
	for _, ct := range ctrs {
		if ct.Source == "" || ct.Source == source || !ct.Running() {
			continue
		}
		if src, _ := i.store.Source(nil, ct.Source); src != nil && !src.Synced {
			return ct.Source
		}
	}
	return ""
}
