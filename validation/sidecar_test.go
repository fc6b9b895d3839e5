package validation_test

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/berth-dev/berth/validation"
)

func TestContainerRestartPolicyRules(t *testing.T) {
	exec := &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
	for _, tc := range []struct {
		name   string
		mutate func(p *v1.Pod)
		want   string
	}{
		{"app container", func(p *v1.Pod) { p.Spec.Containers[0].RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways) },
			"spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers"},
		{"init container Never", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "i", Image: "i", RestartPolicy: ptr.To(v1.ContainerRestartPolicy("Never"))}}
		}, `spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"`},
		{"startup probe on a regular init container", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "i", Image: "i", StartupProbe: exec}}
		}, "spec.initContainers[0].startupProbe: Forbidden: may not be set for init containers without restartPolicy=Always"},
		{"readiness probe on a regular init container", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "i", Image: "i", ReadinessProbe: exec}}
		}, "spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always"},
		{"lifecycle on a regular init container", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "i", Image: "i", Lifecycle: &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: exec.Exec}}}}
		}, "spec.initContainers[0].lifecycle: Forbidden: may not be set for init containers without restartPolicy=Always"},
		{"sidecar probe still checked", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "i", Image: "i", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways),
				StartupProbe: &v1.Probe{ProbeHandler: exec.ProbeHandler, SuccessThreshold: 2}}}
		}, "spec.initContainers[0].startupProbe.successThreshold: Invalid value: 2: must be 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := specErrs(t, tc.mutate, validation.Options{})
			for _, e := range errs {
				if strings.HasPrefix(e, tc.want) {
					return
				}
			}
			t.Errorf("got %q\nwant %q", errs, tc.want)
		})
	}
}
