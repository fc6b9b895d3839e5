package sources

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/berth-dev/berth/manifest"
)

// Quota bounds what one source may declare, as a ResourceQuota bounds a
// namespace: Pods counts its pods, Objects its ConfigMaps, Secrets and
// claims, Bytes the manifests they come from (each origin, an etcd key, a
// pushed file or the HTTP body, counted once). A zero limit is no limit.
type Quota struct {
	Pods, Objects, Bytes int64
	// Held, when set, returns the UIDs of the source's pods that the node
	// still holds: declared in the store, or removed while a container of
	// them still runs (it stops for its grace period, which nothing caps).
	// Pods counts them until they are gone, as a ResourceQuota counts a
	// terminating pod; without Held a deleted pod frees its place at once.
	Held func(source string) []string
}

// limited reports whether q limits anything.
func (q Quota) limited() bool { return q.Pods > 0 || q.Objects > 0 || q.Bytes > 0 }

// held returns the UIDs of the pods of source that the node holds (none
// without Held or a pods limit).
func (q Quota) held(source string) []string {
	if q.Held == nil || q.Pods <= 0 {
		return nil
	}
	return q.Held(source)
}

// usage is what a source declares, or a request adds, in a Quota's terms.
type usage struct {
	pods, objects, bytes int64
}

func (u usage) add(v usage) usage {
	return usage{pods: u.pods + v.pods, objects: u.objects + v.objects, bytes: u.bytes + v.bytes}
}

func (u usage) times(n int64) usage {
	return usage{pods: u.pods * n, objects: u.objects * n, bytes: u.bytes * n}
}

// exceeded returns the apiserver's ResourceQuota refusal ("exceeded quota:
// NAME, requested: r=n, used: r=n, limited: r=n") of requested over used,
// the usage of source NAME's current declarations, or "" when it fits.
// Only what requested grows is checked: a request that shrinks or keeps a
// resource passes it even over the limit (a lowered quota, a restart), as
// an update that does not grow usage passes a ResourceQuota. A request for
// pods counts the pods the node holds (Held) when they are more than used
// counts: a deleted pod until its containers have stopped. The two mostly
// name the same pods (a declared pod the store admitted is in both), so
// used.pods is raised to the held count, never summed with it; writes
// racing to the store can thus be counted low (SECURITY.md).
func (q Quota) exceeded(name string, used, requested usage) string {
	if requested.pods > 0 {
		used.pods = max(used.pods, int64(len(q.held(name))))
	}
	return q.over(name, used, requested)
}

// over is exceeded without the held pods.
func (q Quota) over(name string, used, requested usage) string {
	var req, use, lim []string
	for _, r := range []struct {
		name               string
		limit, used, asked int64
	}{ // in name order, as the apiserver prints resources
		{"bytes", q.Bytes, used.bytes, requested.bytes},
		{"objects", q.Objects, used.objects, requested.objects},
		{"pods", q.Pods, used.pods, requested.pods},
	} {
		if r.limit <= 0 || r.asked <= 0 || r.used+r.asked <= r.limit {
			continue
		}
		req = append(req, fmt.Sprintf("%s=%d", r.name, r.asked))
		use = append(use, fmt.Sprintf("%s=%d", r.name, r.used))
		lim = append(lim, fmt.Sprintf("%s=%d", r.name, r.limit))
	}
	if len(req) == 0 {
		return ""
	}
	return fmt.Sprintf("exceeded quota: %s, requested: %s, used: %s, limited: %s",
		name, strings.Join(req, ","), strings.Join(use, ","), strings.Join(lim, ","))
}

// quotaErr is the 403 PushError of a write over the quota.
func quotaErr(msg string) error { return &PushError{Code: http.StatusForbidden, Msg: msg} }

// quotaGate keeps a source's full updates within its Quota: what it
// admitted last time is admitted first, then the pods the node holds that
// the update no longer declares (removed, still terminating: Quota.Held),
// then the rest in the update's order, so a new pod or object cannot push
// out one that runs, nor take the place of one still stopping; each one
// beyond the quota is left out with an error naming the quota (so a
// version admitted before is kept, as for any refused manifest) until an
// update finds room for it. An origin's bytes are charged with the first
// thing admitted from it. A gate belongs to one source's goroutine.
type quotaGate struct {
	admitted map[string]bool // "pod ns/name", "<Kind> ns/name"
	// whole, when set, is the last update, admitted whole: admitted is
	// made from it when needed.
	whole *Update
}

// admitBounded is admit for an update whose usage (each origin's bytes
// charged once) is at most bound. When the last update was admitted whole
// and bound fits q, with the pods the node holds that u does not declare
// when u's pods are not the last ones, u is admitted whole as admit would,
// at the cost of a pass over its pods: a write costs no pass over the
// source's objects.
func (g *quotaGate) admitBounded(source string, q Quota, u Update, size func(origin string) int64, bound usage) Update {
	if q.limited() && u.Err == nil && g.whole != nil {
		if q.Pods > 0 && !sameDesired(g.whole.Pods, u.Pods) {
			bound.pods += heldElsewhere(source, q, u)
		}
		if q.over(source, usage{}, bound) == "" {
			g.admitted, g.whole = nil, &u
			return u
		}
	}
	return g.admit(source, q, u, size)
}

// sameDesired reports whether a and b are the same pod objects in order.
func sameDesired(a, b []manifest.Desired) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Pod != b[i].Pod {
			return false
		}
	}
	return true
}

// wasAdmitted reports whether ref was admitted last time.
func (g *quotaGate) wasAdmitted(ref string) bool {
	if g.whole != nil {
		g.admitted = make(map[string]bool, len(g.whole.Pods)+len(g.whole.Objects))
		for _, p := range g.whole.Pods {
			g.admitted["pod "+manifest.PodKey(p.Pod.Namespace, p.Pod.Name)] = true
		}
		for _, o := range g.whole.Objects {
			g.admitted[o.Kind+" "+o.Key()] = true
		}
		g.whole = nil
	}
	return g.admitted[ref]
}

// admit returns u within q; size gives the bytes of an origin. u is not
// changed: a refusal builds new slices.
func (g *quotaGate) admit(source string, q Quota, u Update, size func(origin string) int64) Update {
	if !q.limited() || u.Err != nil {
		g.admitted, g.whole = nil, nil
		return u
	}
	type item struct {
		ref, origin, kind, key string
		use                    usage
	}
	items := make([]item, 0, len(u.Pods)+len(u.Objects))
	for _, p := range u.Pods {
		key := manifest.PodKey(p.Pod.Namespace, p.Pod.Name)
		items = append(items, item{"pod " + key, p.Origin, "", key, usage{pods: 1}})
	}
	for _, o := range u.Objects {
		items = append(items, item{o.Kind + " " + o.Key(), o.Origin, o.Kind, o.Key(), usage{objects: 1}})
	}
	var used usage
	charged := map[string]bool{}
	next := make(map[string]bool, len(items))
	refused := map[int]string{}
	for _, before := range []bool{true, false} {
		if !before {
			used.pods += g.terminating(source, q, u, next)
		}
		for i, it := range items {
			if g.wasAdmitted(it.ref) != before {
				continue
			}
			req := it.use
			if !charged[it.origin] {
				req.bytes = size(it.origin)
			}
			if msg := q.over(source, used, req); msg != "" {
				refused[i] = msg
				continue
			}
			used = used.add(req)
			charged[it.origin] = true
			next[it.ref] = true
		}
	}
	g.admitted, g.whole = next, nil
	if len(refused) == 0 {
		g.admitted, g.whole = nil, &u
		return u
	}
	out := Update{Source: u.Source, Warnings: u.Warnings, Errors: append([]manifest.ManifestError(nil), u.Errors...)}
	for i, p := range u.Pods {
		if _, no := refused[i]; !no {
			out.Pods = append(out.Pods, p)
		}
	}
	for j, o := range u.Objects {
		if _, no := refused[len(u.Pods)+j]; !no {
			out.Objects = append(out.Objects, o)
		}
	}
	for i, it := range items {
		if msg, no := refused[i]; no {
			out.Errors = append(out.Errors, manifest.ManifestError{Origin: it.origin, Kind: it.kind, PodKey: it.key, Err: "Forbidden: " + msg})
		}
	}
	return out
}

// terminating counts the pods of source the node holds (q.Held) that u
// does not declare: removed ones still stopping. It asks Held only when u
// has a pod not admitted before (next holds the admitted refs so far). A
// held pod u declares is counted as u's, never twice (after a restart
// every declared pod's containers run before any is admitted).
func (g *quotaGate) terminating(source string, q Quota, u Update, next map[string]bool) int64 {
	fresh := false
	for _, p := range u.Pods {
		if !next["pod "+manifest.PodKey(p.Pod.Namespace, p.Pod.Name)] {
			fresh = true
			break
		}
	}
	if !fresh {
		return 0
	}
	return heldElsewhere(source, q, u)
}

// heldElsewhere counts the pods of source the node holds (q.Held) that u
// does not declare.
func heldElsewhere(source string, q Quota, u Update) int64 {
	held := q.held(source)
	if len(held) == 0 {
		return 0
	}
	declared := make(map[string]bool, len(u.Pods))
	for _, p := range u.Pods {
		declared[string(p.Pod.UID)] = true
	}
	var n int64
	for _, uid := range held {
		if !declared[uid] {
			n++
		}
	}
	return n
}
