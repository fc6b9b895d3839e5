package validation_test

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/validation"
)

func TestWarnings(t *testing.T) {
	p := validPod()
	p.Spec.Tolerations = []v1.Toleration{{Key: "k"}}
	p.Spec.ServiceAccountName = "sa"
	p.Spec.EnableServiceLinks = ptr.To(false)
	p.Spec.NodeName = "other" // defaulted, no warning
	p.Spec.Volumes[0].EmptyDir.SizeLimit = ptr.To(resource.MustParse("1Gi"))
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "mem", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{
		Medium: v1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Gi"))}}})
	p.Spec.Containers[1].SecurityContext = &v1.SecurityContext{WindowsOptions: &v1.WindowsSecurityContextOptions{}}
	p.Spec.Containers[1].ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: "cpu", RestartPolicy: "NotRequired"}}
	p.Spec.Containers[0].Resources.Limits = v1.ResourceList{"ephemeral-storage": resource.MustParse("1Gi"), "cpu": resource.MustParse("1")}
	manifest.Default("t", p, false)
	if errs := validation.Pod(p, validation.Options{}); len(errs) > 0 {
		t.Fatalf("refused: %v", errs)
	}
	var paths []string
	for _, w := range validation.Warnings(p) {
		paths = append(paths, w.Path)
	}
	want := "spec.containers[1].resizePolicy, spec.containers[1].securityContext.windowsOptions, spec.serviceAccountName, " +
		"spec.tolerations, spec.enableServiceLinks, spec.containers[0].resources.limits[ephemeral-storage]"
	if got := strings.Join(paths, ", "); got != want {
		t.Errorf("warnings\n%s\nwant\n%s", got, want)
	}
	line := manifest.WarningLine(manifest.Desired{Pod: p, Origin: "pods/web.yaml"})
	wantLine := "pods/web.yaml: default/web: ignored without a cluster: spec.containers[1].resizePolicy (no in-place resize API), " +
		"spec.serviceAccountName (no service accounts (still readable through the downward API)), spec.tolerations (no taints), " +
		"spec.enableServiceLinks (no Services); not enforced: spec.containers[1].securityContext.windowsOptions (Windows only, ignored on a Linux node), " +
		"spec.containers[0].resources.limits[ephemeral-storage] (berth does not limit a container's disk use)"
	if line != wantLine {
		t.Errorf("line\n%s\nwant\n%s", line, wantLine)
	}
	if got := validation.Warnings(validPod()); len(got) != 0 {
		t.Errorf("plain pod warns %v", got)
	}
}

// A file source logs a pod's warning line once, and again only when the
// pod's spec changed.

// kubeadm's static pods state the priority of their class; berth maps the
// class, so nothing is ignored. Another priority is.
func TestWarningsKubeadmPriority(t *testing.T) {
	p := validPod()
	p.Spec.PriorityClassName = "system-node-critical"
	p.Spec.Priority = ptr.To[int32](2000001000)
	if got := validation.Warnings(p); len(got) != 0 {
		t.Errorf("kubeadm's priority warns: %v", got)
	}
	p.Spec.Priority = ptr.To[int32](5)
	if got := validation.Warnings(p); len(got) != 1 || got[0].Path != "spec.priority" || got[0].Reason != "no scheduler or preemption" || got[0].NotEnforced {
		t.Errorf("another priority: %v", got)
	}
	p.Spec.PriorityClassName = ""
	p.Spec.Priority = ptr.To[int32](2000001000)
	if got := validation.Warnings(p); len(got) != 1 {
		t.Errorf("a priority without its class: %v", got)
	}
}
