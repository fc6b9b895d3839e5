package podconfig

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/berth-dev/berth/runtime"
)

// A sidecar's label gives its index among the init containers, so its stop
// keeps the kubelet's order without the spec; no other container has one.
func TestSidecarLabel(t *testing.T) {
	c := mapper(t)
	p := specPod(func(p *v1.Pod) {
		p.Spec.InitContainers = []v1.Container{{Name: "setup", Image: "app:1"},
			{Name: "proxy", Image: "app:1", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways)}}
	})
	for _, tc := range []struct {
		ctr  *v1.Container
		want string
	}{{&p.Spec.Spec.InitContainers[0], ""}, {&p.Spec.Spec.InitContainers[1], "1"}, {&p.Spec.Spec.Containers[0], ""}} {
		labels := c.containerLabels(p, tc.ctr, "sb1", 0, 0)
		if got, ok := labels[runtime.LabelSidecar]; got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: sidecar label %q (set %v), want %q", tc.ctr.Name, got, ok, tc.want)
		}
	}
}

// An edit of a sidecar changes its hash only: the plan replaces it alone.
// Making an init container a sidecar changes its hash too.
func TestSidecarEditChangesOnlyItsHash(t *testing.T) {
	p := specPod(func(p *v1.Pod) {
		p.Spec.InitContainers = []v1.Container{{Name: "proxy", Image: "app:1", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways)}}
	}).Spec
	edited := p.DeepCopy()
	edited.Spec.InitContainers[0].Env = []v1.EnvVar{{Name: "X", Value: "1"}}
	if ContainerHash(edited, &edited.Spec.InitContainers[0]) == ContainerHash(p, &p.Spec.InitContainers[0]) {
		t.Error("a sidecar's edit kept its hash")
	}
	if ContainerHash(edited, &edited.Spec.Containers[0]) != ContainerHash(p, &p.Spec.Containers[0]) || SandboxHash(edited) != SandboxHash(p) {
		t.Error("a sidecar's edit changed the app container's or the sandbox's hash")
	}
	regular := p.DeepCopy()
	regular.Spec.InitContainers[0].RestartPolicy = nil
	if ContainerHash(regular, &regular.Spec.InitContainers[0]) == ContainerHash(p, &p.Spec.InitContainers[0]) {
		t.Error("restartPolicy is not in the container hash")
	}
}
