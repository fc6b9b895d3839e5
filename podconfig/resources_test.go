package podconfig

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-dev/berth/runtime"
)

// Pod-level spec.resources, as the kubelet applies them to a container:
// its unset limits are the pod's; the pod level alone decides the QoS
// class.
func TestPodLevelResources(t *testing.T) {
	c := mapper(t)
	q := resource.MustParse
	const mi = int64(1) << 20
	for _, tc := range []struct {
		name       string
		pod, ctr   v1.ResourceRequirements
		shares     int64
		quota      int64
		memory     int64
		oom        int
		wantClass  v1.PodQOSClass
		otherEmpty bool // a second container without resources
	}{
		{name: "pod limits cap a container without its own", pod: v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: q("1"), v1.ResourceMemory: q("64Mi")}},
			shares: 1024, quota: 100000, memory: 64 * mi, oom: -997, wantClass: v1.PodQOSGuaranteed, otherEmpty: true},
		{name: "a container's own limit stays", pod: v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: q("64Mi")}},
			ctr:    v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: q("32Mi")}},
			shares: 2, memory: 32 * mi, oom: 1000 - int(1000*32*mi/(8*gi)), wantClass: v1.PodQOSBurstable},
		{name: "a zero limit is unset", pod: v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: q("2")}},
			ctr:    v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: q("0")}, Requests: v1.ResourceList{v1.ResourceCPU: q("250m")}},
			shares: 256, quota: 200000, oom: 999, wantClass: v1.PodQOSBurstable},
		{name: "pod requests only: no container limit", pod: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: q("500m"), v1.ResourceMemory: q("100Mi")}},
			shares: 2, oom: 999, wantClass: v1.PodQOSBurstable},
		{name: "pod-level Guaranteed over containers that ask nothing", pod: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: q("500m"), v1.ResourceMemory: q("100Mi")},
			Limits:   v1.ResourceList{v1.ResourceCPU: q("500m"), v1.ResourceMemory: q("100Mi")}},
			shares: 512, quota: 50000, memory: 100 * mi, oom: -997, wantClass: v1.PodQOSGuaranteed},
		{name: "pod requests below limits", pod: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: q("100m"), v1.ResourceMemory: q("100Mi")},
			Limits:   v1.ResourceList{v1.ResourceCPU: q("500m"), v1.ResourceMemory: q("100Mi")}},
			shares: 512, quota: 50000, memory: 100 * mi, oom: 999, wantClass: v1.PodQOSBurstable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := specPod(func(p *v1.Pod) {
				p.Spec.Resources = &tc.pod
				p.Spec.Containers[0].Resources = tc.ctr
				if tc.otherEmpty {
					p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "b", Image: "app:1"})
				}
			})
			r := build(t, c, p, runtime.ImageInfo{}).Resources
			if r.CPUShares != tc.shares || r.CPUQuota != tc.quota || r.Memory != tc.memory || r.MemorySwap != tc.memory {
				t.Errorf("resources %+v, want shares %d quota %d memory=swap %d", r, tc.shares, tc.quota, tc.memory)
			}
			if got := QOSClass(p.Spec); got != tc.wantClass {
				t.Errorf("qos %s, want %s", got, tc.wantClass)
			}
			if got := build(t, c, p, runtime.ImageInfo{}).OomScoreAdj; got != tc.oom {
				t.Errorf("oom_score_adj %d, want %d", got, tc.oom)
			}
		})
	}
}

// A pod-level edit changes the hash of the containers it applies to; pods
// without pod-level resources keep the hash they had.
func TestPodLevelResourcesInContainerHash(t *testing.T) {
	p := specPod(nil).Spec
	before := ContainerHash(p, &p.Spec.Containers[0])
	// The hash's struct before pod-level resources, for this pod.
	legacy := hashOf(struct {
		C        *v1.Container
		Vols     []v1.Volume
		PodSC    *v1.PodSecurityContext `json:",omitempty"`
		SharePID *bool                  `json:",omitempty"`
		Meta     map[string]string      `json:",omitempty"`
		Priority string                 `json:",omitempty"`
	}{C: &p.Spec.Containers[0]})
	if before != legacy {
		t.Fatalf("hash of a pod without pod-level resources moved: %s, was %s", before, legacy)
	}
	p.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}}
	limited := ContainerHash(p, &p.Spec.Containers[0])
	p.Spec.Resources.Limits[v1.ResourceMemory] = resource.MustParse("128Mi")
	if limited == before || ContainerHash(p, &p.Spec.Containers[0]) == limited {
		t.Fatal("a pod-level limit edit leaves the container hash")
	}
}
