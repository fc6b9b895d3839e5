package sources

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/berth-dev/berth/manifest"
)

// heldPods is a fake Quota.Held: the UIDs the node holds, by source.
type heldPods struct {
	mu    sync.Mutex
	uids  map[string][]string
	asked []string
}

func (h *heldPods) set(source string, uids ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.uids == nil {
		h.uids = map[string][]string{}
	}
	h.uids[source] = uids
}

func (h *heldPods) held(source string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked = append(h.asked, source)
	return h.uids[source]
}

// TestPushQuotaCountsTerminatingPods: a deleted pod keeps its place in the
// pods quota while the node still holds it (its containers stop for its
// grace period), as a ResourceQuota counts a terminating pod: a new pod is
// refused, dry run or not, until it is gone. A replace never needs room.
func TestPushQuotaCountsTerminatingPods(t *testing.T) {
	h := &heldPods{}
	s := NewPushSource("push", filepath.Join(t.TempDir(), "push"),
		Options{Quota: Quota{Pods: 2, Held: h.held}, Options: manifest.Options{DeriveUIDs: true, Node: "n"}})
	for _, name := range []string{"a", "b"} {
		if _, err := s.Put("Pod", "default", name, []byte(nsPod("default", name, "img")), PutOptions{}); err != nil {
			t.Fatalf("pod %s within the quota: %v", name, err)
		}
	}
	h.set("push", "uid-a", "uid-b") // both admitted and running
	if err := s.Delete("Pod", "default", "a", false); err != nil {
		t.Fatal(err)
	}
	// a stops for its grace period: the node still holds it.
	over := "exceeded quota: push, requested: pods=1, used: pods=2, limited: pods=2"
	for _, dry := range []bool{true, false} {
		_, err := s.Put("Pod", "default", "c", []byte(nsPod("default", "c", "img")), PutOptions{DryRun: dry})
		wantQuotaRefusal(t, "a new pod while a deleted one terminates", err, over)
	}
	if _, err := s.Put("Pod", "default", "b", []byte(nsPod("default", "b", "img:2")), PutOptions{Replace: true}); err != nil {
		t.Fatalf("replace of b while a terminates: %v", err)
	}
	if _, err := s.Put("ConfigMap", "default", "cm", namedCM("cm", 10), PutOptions{}); err != nil {
		t.Fatalf("a ConfigMap while a terminates: %v", err)
	}
	h.set("push", "uid-b") // a's containers are gone
	if _, err := s.Put("Pod", "default", "c", []byte(nsPod("default", "c", "img")), PutOptions{}); err != nil {
		t.Fatalf("new pod once a is gone: %v", err)
	}
	for _, src := range h.asked {
		if src != "push" {
			t.Fatalf("Held asked for source %q", src)
		}
	}
	if len(h.asked) == 0 {
		t.Fatal("Held never asked")
	}
}

// TestQuotaGateCountsTerminatingPods: a network source's new pod is left
// out while removed pods of the source still terminate and the quota is
// full, and admitted once they are gone; pods admitted before are kept
// first, and a pod the update declares is never counted twice (a restart
// finds every declared pod's containers running).
func TestQuotaGateCountsTerminatingPods(t *testing.T) {
	opts := manifest.Options{DeriveUIDs: true, Node: "n"}
	decode := func(names ...string) Update {
		u := Update{Source: "etcd"}
		for _, n := range names {
			u.add(manifest.DecodeAll("etcd", "key/"+n, []byte(podManifest(n, "x")), opts))
		}
		return u
	}
	uid := map[string]string{}
	for _, p := range decode("a", "b", "c").Pods {
		uid[p.Pod.Name] = string(p.Pod.UID)
	}
	h := &heldPods{}
	q := Quota{Pods: 2, Held: h.held}
	size := func(string) int64 { return 0 }

	var g quotaGate
	h.set("etcd", uid["a"], uid["b"]) // a restart: both run, neither admitted yet
	if got := g.admit("etcd", q, decode("a", "b"), size); !exactly("a", "b")(got) || len(got.Errors) != 0 {
		t.Fatalf("declared pods that run: %s", describeFull(got))
	}
	// a is removed from etcd, c added: a still stops.
	got := g.admit("etcd", q, decode("b", "c"), size)
	if !hasPods("b")(got) || len(got.Errors) != 1 || got.Errors[0].PodKey != "default/c" ||
		got.Errors[0].Err != "Forbidden: exceeded quota: etcd, requested: pods=1, used: pods=2, limited: pods=2" {
		t.Fatalf("a new pod while a removed one terminates: %s", describeFull(got))
	}
	h.set("etcd", uid["b"])
	if got := g.admit("etcd", q, decode("b", "c"), size); !exactly("b", "c")(got) || len(got.Errors) != 0 {
		t.Fatalf("once the removed pod is gone: %s", describeFull(got))
	}
	// Over a full quota a terminating pod never pushes out one admitted.
	h.set("etcd", uid["a"], uid["b"], uid["c"])
	if got := g.admit("etcd", q, decode("b", "c"), size); !exactly("b", "c")(got) || len(got.Errors) != 0 {
		t.Fatalf("admitted pods beside a terminating one: %s", describeFull(got))
	}
	if len(h.asked) == 0 || strings.ReplaceAll(strings.Join(h.asked, ","), "etcd", "") != strings.Repeat(",", len(h.asked)-1) {
		t.Fatalf("Held asked for %v, want etcd only", h.asked)
	}
}
