package admission

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func res(cpu, mem string) v1.ResourceList {
	rl := v1.ResourceList{}
	if cpu != "" {
		rl[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		rl[v1.ResourceMemory] = resource.MustParse(mem)
	}
	return rl
}

func ctr(name string, req, lim v1.ResourceList) v1.Container {
	return v1.Container{Name: name, Resources: v1.ResourceRequirements{Requests: req, Limits: lim}}
}

func sidecar(name string, req v1.ResourceList) v1.Container {
	c := ctr(name, req, nil)
	always := v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

func TestPodRequests(t *testing.T) {
	const mi = 1 << 20
	for _, tc := range []struct {
		name string
		spec v1.PodSpec
		want requests
	}{
		{"none", v1.PodSpec{Containers: []v1.Container{ctr("a", nil, nil)}}, requests{}},
		{"app containers add up", v1.PodSpec{Containers: []v1.Container{
			ctr("a", res("100m", "100Mi"), nil), ctr("b", res("200m", ""), nil)}}, requests{300, 100 * mi}},
		{"an unset request is the limit", v1.PodSpec{Containers: []v1.Container{
			ctr("a", res("", "10Mi"), res("1", "50Mi"))}}, requests{1000, 10 * mi}},
		{"the largest init container, per resource", v1.PodSpec{
			InitContainers: []v1.Container{ctr("i1", res("2", "1Mi"), nil), ctr("i2", res("100m", "300Mi"), nil)},
			Containers:     []v1.Container{ctr("a", res("500m", "100Mi"), nil)}}, requests{2000, 300 * mi}},
		// KEP-753: a sidecar adds to the app containers and to every init
		// container that starts after it.
		{"sidecars", v1.PodSpec{
			InitContainers: []v1.Container{ctr("i1", res("300m", ""), nil), sidecar("s1", res("200m", "10Mi")),
				ctr("i2", res("450m", "5Mi"), nil), sidecar("s2", res("100m", ""))},
			Containers: []v1.Container{ctr("a", res("100m", "1Mi"), nil)}}, requests{650, 15 * mi}},
		{"sidecars and apps above the init containers", v1.PodSpec{
			InitContainers: []v1.Container{sidecar("s1", res("1", "")), ctr("i1", res("500m", ""), nil)},
			Containers:     []v1.Container{ctr("a", res("1", ""), nil)}}, requests{2000, 0}},
		{"pod-level requests replace the containers'", v1.PodSpec{
			Resources:  &v1.ResourceRequirements{Requests: res("2", "")},
			Containers: []v1.Container{ctr("a", res("100m", "64Mi"), nil)}}, requests{2000, 64 * mi}},
		{"pod-level requests default to pod-level limits", v1.PodSpec{
			Resources:  &v1.ResourceRequirements{Limits: res("", "1Gi")},
			Containers: []v1.Container{ctr("a", res("100m", ""), nil)}}, requests{100, 1024 * mi}},
		{"overhead is added", v1.PodSpec{Overhead: res("250m", "120Mi"),
			Containers: []v1.Container{ctr("a", res("100m", "8Mi"), nil)}}, requests{350, 128 * mi}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := podRequests(&v1.Pod{Spec: tc.spec}); got != tc.want {
				t.Errorf("podRequests = %+v, want %+v", got, tc.want)
			}
		})
	}
}
