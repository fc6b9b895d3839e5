package resourcehelper

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func resList(cpu, mem string) v1.ResourceList {
	rl := v1.ResourceList{}
	if cpu != "" {
		rl[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		rl[v1.ResourceMemory] = resource.MustParse(mem)
	}
	return rl
}

func reqCtr(name string, req, lim v1.ResourceList) v1.Container {
	return v1.Container{Name: name, Resources: v1.ResourceRequirements{Requests: req, Limits: lim}}
}

func sidecarCtr(name string, req v1.ResourceList) v1.Container {
	c := reqCtr(name, req, nil)
	always := v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

func TestPodRequests(t *testing.T) {
	const mi = 1 << 20
	for _, tc := range []struct {
		name string
		spec v1.PodSpec
		want Requests
	}{
		{"none", v1.PodSpec{Containers: []v1.Container{reqCtr("a", nil, nil)}}, Requests{}},
		{"app containers add up", v1.PodSpec{Containers: []v1.Container{
			reqCtr("a", resList("100m", "100Mi"), nil), reqCtr("b", resList("200m", ""), nil)}}, Requests{300, 100 * mi}},
		{"an unset request is the limit", v1.PodSpec{Containers: []v1.Container{
			reqCtr("a", resList("", "10Mi"), resList("1", "50Mi"))}}, Requests{1000, 10 * mi}},
		{"the largest init container, per resource", v1.PodSpec{
			InitContainers: []v1.Container{reqCtr("i1", resList("2", "1Mi"), nil), reqCtr("i2", resList("100m", "300Mi"), nil)},
			Containers:     []v1.Container{reqCtr("a", resList("500m", "100Mi"), nil)}}, Requests{2000, 300 * mi}},
		// KEP-753: a sidecar adds to the app containers and to every init
		// container that starts after it.
		{"sidecars", v1.PodSpec{
			InitContainers: []v1.Container{reqCtr("i1", resList("300m", ""), nil), sidecarCtr("s1", resList("200m", "10Mi")),
				reqCtr("i2", resList("450m", "5Mi"), nil), sidecarCtr("s2", resList("100m", ""))},
			Containers: []v1.Container{reqCtr("a", resList("100m", "1Mi"), nil)}}, Requests{650, 15 * mi}},
		{"sidecars and apps above the init containers", v1.PodSpec{
			InitContainers: []v1.Container{sidecarCtr("s1", resList("1", "")), reqCtr("i1", resList("500m", ""), nil)},
			Containers:     []v1.Container{reqCtr("a", resList("1", ""), nil)}}, Requests{2000, 0}},
		{"pod-level requests replace the containers'", v1.PodSpec{
			Resources:  &v1.ResourceRequirements{Requests: resList("2", "")},
			Containers: []v1.Container{reqCtr("a", resList("100m", "64Mi"), nil)}}, Requests{2000, 64 * mi}},
		{"pod-level requests default to pod-level limits", v1.PodSpec{
			Resources:  &v1.ResourceRequirements{Limits: resList("", "1Gi")},
			Containers: []v1.Container{reqCtr("a", resList("100m", ""), nil)}}, Requests{100, 1024 * mi}},
		{"overhead is added", v1.PodSpec{Overhead: resList("250m", "120Mi"),
			Containers: []v1.Container{reqCtr("a", resList("100m", "8Mi"), nil)}}, Requests{350, 128 * mi}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PodRequests(&tc.spec); got != tc.want {
				t.Errorf("PodRequests = %+v, want %+v", got, tc.want)
			}
		})
	}
}
