// Package admission decides which pods of a source's update the node takes:
// one source per pod key, one pod per key within a source, one pod per UID
// (it names the pod's directories on the host), no host port bound twice,
// and a pod still running for a source that has not synced since berth
// started stays that source's; new and changed pods must fit the node
// (node.go). It is pure over a View of the store, so the store can run the
// decision and its write in one transaction, and it reads what the stored
// pods hold (host ports, UIDs, claims, requests) from the store's indexes.
// One algorithm (decide.go) serves a whole update (Admit) and an update
// given by its difference (AdmitChanged).
package admission

import (
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/resourcehelper"
)

// View is the store as admission reads it (store.View, inside the write
// transaction that records the decision).
type View interface {
	Pod(key string) (*model.Pod, error)
	PodsBySource(source string) ([]*model.Pod, error)
	// PodsByHostPort, PodsByUID and PodsByClaim return the pods holding
	// a host port that conflicts with hp, a UID and a claim, by key.
	PodsByHostPort(hp model.HostPort) ([]*model.Pod, error)
	PodsByUID(uid string) ([]*model.Pod, error)
	PodsByClaim(key string) ([]*model.Pod, error)
	// Requests are those of the pods that have not ended, summed
	// (store.Counted).
	Requests() resourcehelper.Requests
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
	// Refused are the refusals by pod key and by object ref
	// (model.ObjectRef).
	Refused map[string]string
}

// Admit decides u, the source's whole update, against the store as v shows
// it: decide with every offered pod a candidate and the source's stored
// pods u no longer offers gone. It never modifies what v returns. A pod
// offered again as it is stored, without error, keeps its place unchecked,
// as the kubelet admits a pod once.
func Admit(v View, u Update) (Decision, error) {
	stored, err := v.PodsBySource(u.Source)
	if err != nil {
		return Decision{}, err
	}
	offered := make(map[string]bool, len(u.Pods))
	cand := make([]int, len(u.Pods))
	for i, d := range u.Pods {
		offered[key(d)] = true
		cand[i] = i
	}
	var gone []string
	for _, p := range stored {
		if !offered[p.Key] {
			gone = append(gone, p.Key)
		}
	}
	me := readErrors(u)
	objects, refusals, refused, err := admitObjects(v, u, me.failedOrigin)
	if err != nil {
		return Decision{}, err
	}
	c, err := decide(v, u, me, cand, gone)
	if err != nil {
		return Decision{}, err
	}
	next := make(map[string]*model.Pod, len(stored)+len(c.Pods))
	for _, p := range stored {
		next[p.Key] = p
	}
	for _, k := range c.Removed {
		delete(next, k)
	}
	for _, p := range c.Pods {
		next[p.Key] = p
	}
	pods := make([]*model.Pod, 0, len(next))
	for _, p := range next {
		pods = append(pods, p)
	}
	sort.Slice(pods, func(a, b int) bool { return pods[a].Key < pods[b].Key })
	errs := append(append(me.lines, refusals...), c.Errors...)
	for k, e := range c.Refused {
		refused[k] = e
	}
	return Decision{Pods: pods, Objects: objects, Errors: errs, Warnings: u.Node.warnings(u.Pods), Refused: refused}, nil
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

// heldBy names another, not yet synced source whose containers (ctrs, those
// of a pod's key) run the pod: after a restart the source that ran a pod
// keeps its claim until it has synced, whichever source happens to answer
// first.
func heldBy(v View, ctrs []*model.Container, source string) (string, error) {
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
