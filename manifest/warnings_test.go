package manifest

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
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
	Default("t", p, false)
	if errs := Validate(p, Options{}); len(errs) > 0 {
		t.Fatalf("refused: %v", errs)
	}
	want := "spec.containers[1].resizePolicy, spec.containers[1].securityContext.windowsOptions, spec.serviceAccountName, " +
		"spec.tolerations, spec.enableServiceLinks, spec.containers[0].resources.limits[ephemeral-storage]"
	if got := strings.Join(Warnings(p), ", "); got != want {
		t.Errorf("warnings\n%s\nwant\n%s", got, want)
	}
	line := WarningLine(Desired{Pod: p, Origin: "pods/web.yaml"})
	if !strings.HasPrefix(line, "pods/web.yaml: default/web: ignored without a cluster: spec.containers[1].resizePolicy, ") {
		t.Errorf("line %q", line)
	}
	if got := Warnings(validPod()); len(got) != 0 {
		t.Errorf("plain pod warns %q", got)
	}
}

// A file source logs a pod's warning line once, and again only when the
// pod's spec changed.
