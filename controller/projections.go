package controller

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podconfig"
	"github.com/berth-dev/berth/podfs"
)

// projections remembers what was last written of each pod's projected
// volumes (configMap, secret, downwardAPI, projected), by pod UID, so that
// a reconcile whose objects did not change writes nothing, and which pod
// keys wrote under which UIDs, so that their files go with the pod even
// when it never had a container.
type projections struct {
	mu      sync.Mutex
	written map[string]map[string]string // uid → volume → payload digest
	uids    map[string]map[string]bool   // pod key → uids written
}

func newProjections() *projections {
	return &projections{written: map[string]map[string]string{}, uids: map[string]map[string]bool{}}
}

func (p *projections) current(uid, volume, digest string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.written[uid][volume] == digest
}

func (p *projections) record(key, uid, volume, digest string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.written[uid] == nil {
		p.written[uid] = map[string]string{}
	}
	p.written[uid][volume] = digest
	if p.uids[key] == nil {
		p.uids[key] = map[string]bool{}
	}
	p.uids[key][uid] = true
}

// others returns the UIDs key wrote under other than keep.
func (p *projections) others(key, keep string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for uid := range p.uids[key] {
		if uid != keep {
			out = append(out, uid)
		}
	}
	sort.Strings(out)
	return out
}

func (p *projections) forget(uid string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.written, uid)
	for key, set := range p.uids {
		delete(set, uid)
		if len(set) == 0 {
			delete(p.uids, key)
		}
	}
}

// digest identifies a projection's payload and placement.
func digest(pr podfs.Projection) string {
	h := sha256.New()
	names := make([]string, 0, len(pr.Files))
	for n := range pr.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf [8]byte
	for _, n := range names {
		f := pr.Files[n]
		binary.LittleEndian.PutUint64(buf[:], uint64(len(n)))
		h.Write(buf[:])
		h.Write([]byte(n))
		binary.LittleEndian.PutUint64(buf[:], uint64(len(f.Data)))
		h.Write(buf[:])
		h.Write(f.Data)
		binary.LittleEndian.PutUint64(buf[:], uint64(f.Mode))
		h.Write(buf[:])
	}
	if pr.Tmpfs {
		h.Write([]byte{1})
	}
	if pr.GID != nil {
		binary.LittleEndian.PutUint64(buf[:], uint64(*pr.GID))
		h.Write(buf[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// objectsOf are the objects pod p may use.
func (c *Controller) objectsOf(p *model.Pod) podconfig.Objects {
	return sourceObjects{store: c.store, source: p.Source}
}

// syncProjections writes every projected volume of p whose payload changed
// since it was last written, and returns the volumes that cannot be
// written now (a missing object, a failed write) with the reason. The
// containers mounting those wait; the others go on. It is cheap for a pod
// whose objects did not change: one digest per volume, no filesystem call.
func (c *Controller) syncProjections(p *model.Pod) podconfig.VolumeErrors {
	pod := p.Spec
	if !podconfig.HasProjected(pod) {
		return nil
	}
	uid := string(pod.UID)
	objs := c.objectsOf(p)
	var failed podconfig.VolumeErrors
	fail := failed.Add
	var total int64
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if !podconfig.IsProjected(v) {
			continue
		}
		pr, err := c.podconfig.Projection(pod, v, objs, c.cfg.Clock.Now())
		if err != nil {
			fail(v.Name, err)
			continue
		}
		if total += payloadBytes(pr); total > podconfig.MaxPodProjectedBytes {
			fail(v.Name, fmt.Errorf("projected volume %q: the pod's projected volumes hold more than %d MiB", v.Name, podconfig.MaxPodProjectedBytes>>20))
			continue
		}
		d := digest(pr)
		if c.projected.current(uid, v.Name, d) {
			continue
		}
		wrote, err := c.paths.WriteProjection(pr)
		if err != nil {
			c.log.Warn("writing projected volume failed", "pod", p.Key, "volume", v.Name, "err", err)
			fail(v.Name, err)
			continue
		}
		c.projected.record(p.Key, uid, v.Name, d)
		if wrote {
			c.log.Debug("projected volume written", "pod", p.Key, "volume", v.Name, "files", len(pr.Files))
		}
	}
	return failed
}

func payloadBytes(pr podfs.Projection) int64 {
	var n int64
	for _, f := range pr.Files {
		n += int64(len(f.Data))
	}
	return n
}

// volumeError is the error of the first volume ctr mounts that could not
// be written, or nil.
func volumeError(ctr *v1.Container, failed podconfig.VolumeErrors) (string, error) {
	for _, m := range ctr.VolumeMounts {
		if err := failed[m.Name]; err != nil {
			return m.Name, err
		}
	}
	return "", nil
}

// removeStaleProjections removes the pod directories of UIDs key wrote
// projected volumes under, other than keep, that no desired pod nor any
// container has any more: a pod deleted (or replaced by a new incarnation)
// before any of its containers existed leaves no Secret behind.
func (c *Controller) removeStaleProjections(key, keep string) {
	for _, uid := range c.projected.others(key, keep) {
		if c.uidInUse(uid) {
			continue // forget removes it with its containers
		}
		if err := c.paths.RemovePod(uid); err != nil {
			c.log.Warn("removing pod directory failed", "uid", uid, "err", err)
			continue
		}
		c.projected.forget(uid)
	}
}

// uidInUse reports whether any desired pod or any container, of any key,
// has uid: a pod renamed with its metadata.uid keeps its directory.
func (c *Controller) uidInUse(uid string) bool {
	if c.uidDesired(uid) {
		return true
	}
	ctrs, _ := c.store.Containers(nil)
	for _, ct := range ctrs {
		if ct.PodUID == uid {
			return true
		}
	}
	return false
}

// uidDesired reports whether a desired pod, of any key, has uid.
func (c *Controller) uidDesired(uid string) bool {
	pods, _ := c.store.Pods(nil)
	for _, p := range pods {
		if string(p.Spec.UID) == uid {
			return true
		}
	}
	return false
}
