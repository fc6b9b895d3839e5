// Package admission decides which pods of a source's update the node takes:
// one source per pod key, one pod per key within a source, one pod per UID
// (it names the pod's directories on the host), no host port bound twice,
// and a pod still running for a source that has not synced since berth
// started stays that source's; new and changed pods must fit the node
// (node.go). It is pure over a View of the store, so the store can run the
// decision and its write in one transaction.
package admission

import (
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
)

// View is the store as admission reads it (store.View, inside the write
// transaction that records the decision).
type View interface {
	Pods() ([]*model.Pod, error)
	Pod(key string) (*model.Pod, error)
	TerminalPods() ([]*model.Pod, error)
	ContainersByPod(key string) ([]*model.Container, error)
	Source(name string) (*model.Source, error)
	ObjectsBySource(kind, source string) ([]*model.Object, error)
	Object(kind, key string) (*model.Object, error)
}

// Update is one complete update of a source: every pod it offers now, and
// the manifests it could not decode or validate.
type Update struct {
	Source  string
	Pods    []manifest.Desired
	Objects []manifest.Object
	Errors  []manifest.ManifestError
	// Now stamps SeenAt on new or changed pods.
	Now time.Time
	// Node, when set, refuses new and changed pods that do not fit it.
	Node *Node
	// Memo, when set, keeps what was derived from pod specs for the next
	// decision.
	Memo *Memo
}

// Decision is the source's pods after an update and why pods were refused.
type Decision struct {
	// Pods replace the source's pods (store.ReplaceSourcePods semantics).
	// Pods whose update was refused keep their last good spec, with Error
	// set; pods of an origin that failed as a whole are kept unchanged.
	Pods []*model.Pod
	// Objects replace the source's ConfigMaps and Secrets, as Pods do.
	Objects []*model.Object
	// Errors are the update's manifest errors and the refusals, each once.
	Errors []string
	// Warnings concern pods admitted all the same.
	Warnings []string
}

// Admit decides u against the store as v shows it. It never modifies what v
// returns. A pod is checked when it is new or its spec, origin or error
// changed: a pod offered again as it is stored, without error, keeps its
// place unchecked, as the kubelet admits a pod once. Unchanged pods are
// held first, then the changed ones checked in u's order, then the new
// ones.
func Admit(v View, u Update) (Decision, error) {
	all, err := v.Pods()
	if err != nil {
		return Decision{}, err
	}
	defer u.Memo.trim()
	have := map[string]*model.Pod{}
	h := newHolds(v, u, nil, nil)
	for _, p := range all {
		if p.Source == u.Source {
			have[p.Key] = p
			continue
		}
		h.owner[p.Key] = p.Source
		h.hold(p.Key, p.Spec)
		h.fits.hold(p)
	}

	failedOrigin := map[string]bool{}
	podErr := map[string]string{}
	var errs []string
	for _, e := range u.Errors {
		errs = append(errs, e.Error())
		switch {
		case e.PodKey == "":
			failedOrigin[e.Origin] = true
		case e.Kind == "":
			podErr[e.PodKey] = e.Error()
		}
	}
	objects, refusals, err := admitObjects(v, u, failedOrigin)
	if err != nil {
		return Decision{}, err
	}
	errs = append(errs, refusals...)

	// Pods kept on their last good spec (their update failed) keep their
	// ports and UIDs too, so a newcomer cannot take them meanwhile.
	offered := make(map[string]bool, len(u.Pods))
	keys := make([]string, len(u.Pods))
	for i, d := range u.Pods {
		keys[i] = key(d)
		offered[keys[i]] = true
		h.fits.hold(have[keys[i]])
	}
	for k, old := range have {
		if _, bad := podErr[k]; (bad || failedOrigin[old.Origin]) && !offered[k] {
			h.hold(k, old.Spec)
			h.fits.hold(old)
		}
	}

	refuse := func(d manifest.Desired, k, msg string) {
		e := manifest.ManifestError{Origin: d.Origin, PodKey: k, Err: msg}
		errs = append(errs, e.Error())
		podErr[k] = e.Error()
	}
	// Unchanged pods first, then changed, then new: an admitted pod keeps
	// its ports against an edit or a newcomer of the same source.
	const (
		unchanged = iota
		changed
		added
	)
	class := make([]int, len(u.Pods))
	merged := make([]*model.Pod, len(u.Pods))
	for i, d := range u.Pods {
		old, ok := have[keys[i]]
		switch {
		case !ok:
			class[i] = added
		default:
			merged[i] = merge(old, u.Source, d, u.Now)
			if _, bad := podErr[keys[i]]; merged[i] != old || old.Error != "" || bad {
				class[i] = changed
			}
		}
	}
	next := make(map[string]*model.Pod, len(u.Pods))
	for _, pass := range []int{unchanged, changed, added} {
		for i, d := range u.Pods {
			if class[i] != pass {
				continue
			}
			k := keys[i]
			if _, dup := next[k]; dup {
				refuse(d, k, "duplicate pod key in source")
				continue
			}
			if pass == unchanged {
				h.hold(k, d.Pod)
				next[k] = merged[i]
				continue
			}
			p, msg, err := h.check(d, k, have[k], merged[i])
			if err != nil {
				return Decision{}, err
			}
			if msg != "" {
				refuse(d, k, msg)
				continue
			}
			next[k] = p
		}
	}
	// Keep the last good spec of pods whose update failed.
	for k, old := range have {
		if _, ok := next[k]; ok {
			continue
		}
		if msg, bad := podErr[k]; bad {
			next[k] = withError(old, msg)
		} else if failedOrigin[old.Origin] {
			next[k] = old
		}
	}
	pods := make([]*model.Pod, 0, len(next))
	for k, p := range next {
		if msg, bad := podErr[k]; bad && p.Error != msg {
			p = withError(p, msg)
		} else if !bad && p.Error != "" {
			p = withError(p, "")
		}
		pods = append(pods, p)
	}
	sort.Slice(pods, func(a, b int) bool { return pods[a].Key < pods[b].Key })
	return Decision{Pods: pods, Objects: objects, Errors: errs, Warnings: u.Node.warnings(u.Pods)}, nil
}

func key(d manifest.Desired) string { return manifest.PodKey(d.Pod.Namespace, d.Pod.Name) }

// merge returns the stored pod for desired d: the old object when nothing
// changed, else a new one carrying over status for the same UID. The spec
// object stored is compared first, so a pod sent again as the same object
// costs no deep compare.
func merge(old *model.Pod, source string, d manifest.Desired, now time.Time) *model.Pod {
	if old != nil && old.Origin == d.Origin && (old.Spec == d.Pod || equality.Semantic.DeepEqual(old.Spec, d.Pod)) {
		return old
	}
	p := &model.Pod{Key: key(d), Source: source, Origin: d.Origin, Spec: d.Pod, SeenAt: now, Refs: manifest.RefKeys(d.Pod)}
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

// heldBy names another, not yet synced source whose containers run pod key:
// after a restart the source that ran a pod keeps its claim until it has
// synced, whichever source happens to answer first.
func heldBy(v View, k, source string) (string, error) {
	ctrs, err := v.ContainersByPod(k)
	if err != nil {
		return "", err
	}
	for _, ct := range ctrs {
		if ct.Source == "" || ct.Source == source || !ct.Running() {
			continue
		}
		src, err := v.Source(ct.Source)
		if err != nil {
			return "", err
		}
		if src != nil && !src.Synced {
			return ct.Source, nil
		}
	}
	return "", nil
}
