package validation_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/validation"
)

// The tests of this package validate pods as manifest hands them over:
// decoded and defaulted.

func validPod() *v1.Pod {
	p := &v1.Pod{
		Spec: v1.PodSpec{
			Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}},
			Containers: []v1.Container{{
				Name:         "web",
				Image:        "berth/testapp:1",
				Ports:        []v1.ContainerPort{{ContainerPort: 8080, HostPort: 18080}},
				VolumeMounts: []v1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}, {
				Name:  "sidecar",
				Image: "berth/testapp:1",
				Env:   []v1.EnvVar{{Name: "PORT", Value: "8081"}},
			}},
		},
	}
	p.APIVersion, p.Kind, p.Name = "v1", "Pod", "web"
	return p
}

// specErrs defaults and validates validPod after mutate, returning
// "field: message" of every error.
func specErrs(t *testing.T, mutate func(p *v1.Pod), opts validation.Options) []string {
	t.Helper()
	p := validPod()
	mutate(p)
	manifest.Default("t", p, false)
	var got []string
	for _, e := range validation.Pod(p, opts) {
		got = append(got, e.Field+": "+e.ErrorBody())
	}
	return got
}

// accepted defaults pod and fails the test on any error validating it.
func accepted(t *testing.T, pod *v1.Pod, opts validation.Options) {
	t.Helper()
	pod = pod.DeepCopy()
	manifest.Default("t", pod, false)
	for _, e := range validation.Pod(pod, opts) {
		t.Errorf("unexpected error: %v", e)
	}
}

// resList is a ResourceList of the cpu and memory given, "" leaving one out.
func resList(cpu, mem string) v1.ResourceList {
	rl := v1.ResourceList{}
	for name, q := range map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: mem} {
		if q != "" {
			rl[name] = resource.MustParse(q)
		}
	}
	return rl
}
