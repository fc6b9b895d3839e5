package informer

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-dev/berth/admission"
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/sources"
	"github.com/berth-dev/berth/store"
)

// A desired pod written to the store by another writer than the informer
// holds its host port, UID, claim and requests against the next update
// decided by its difference: admission reads what pods hold from the
// store's indexes, so no writer leaves them stale.
func TestApplyByDifferenceSeesOtherWriters(t *testing.T) {
	st, err := store.New(func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	inf := NewSourceInformer(st, nil, nil, nil)
	inf.Node = &admission.Node{Name: "n", OS: "linux", CPUMilli: 1000, Memory: 1 << 34}
	once := &v1.PersistentVolumeClaim{Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}}}
	once.Name, once.Namespace = "once", "default"
	objs := []manifest.Object{{Kind: model.KindPVC, PVC: once, Origin: "once.yaml"}}
	a, b := pod("a", "img", 1), pod("b", "img", 2)
	mustApply(t, inf, sources.Update{Source: "etcd", Pods: []manifest.Desired{a}, Objects: objs})
	mustApply(t, inf, sources.Update{Source: "etcd", Pods: []manifest.Desired{a, b}, Objects: objs})

	// Another writer stores a pod on port 7, with UID uid-w, the claim,
	// and most of the node's CPU.
	w := pod("w", "img", 7)
	data := []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "once"}}}}
	w.Pod.Spec.Volumes = data
	w.Pod.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("800m")}
	if err := st.UpsertPod(&model.Pod{Key: "default/w", Source: "other", Origin: "w.yaml", Spec: w.Pod}); err != nil {
		t.Fatal(err)
	}

	port := pod("port", "img", 7)
	uid := pod("uid", "img", 0)
	uid.Pod.UID = "uid-w"
	claim := pod("claim", "img", 0)
	claim.Pod.Spec.Volumes = data
	big := pod("big", "img", 0)
	big.Pod.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}
	partial := inf.partial
	mustApply(t, inf, sources.Update{Source: "etcd", Pods: []manifest.Desired{a, b, big, claim, port, uid}, Objects: objs})
	if inf.partial == partial {
		t.Fatal("the update was not decided by its difference")
	}
	src, _ := st.Source(nil, "etcd")
	got := strings.Join(src.Errors, "\n")
	for _, want := range []string{
		`port.yaml: default/port: spec.containers[].ports: hostPort 7/TCP on 0.0.0.0 already used by a pod of source "other"`,
		`uid.yaml: default/uid: metadata.uid: uid-w is already the uid of a pod of source "other"`,
		`claim.yaml: default/claim: persistentvolumeclaim "once" is ReadWriteOncePod and already used by pod default/w`,
		`big.yaml: default/big: OutOfcpu: Node didn't have enough resource: cpu, requested: 500, used: 800, capacity: 1000`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("source errors:\n%s\nwant %q", got, want)
		}
	}
	if len(src.Errors) != 4 {
		t.Errorf("source errors %q, want 4", src.Errors)
	}
}
