package sources

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/internal/testutil"
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
func TestWarningLoggedOncePerSpec(t *testing.T) {
	var buf testutil.SyncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	dir := t.TempDir()
	pod := podYAML + "  tolerations: [{key: k}]\n"
	write(t, dir, "web.yaml", pod)
	write(t, dir, "plain.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: plain}\nspec: {containers: [{name: a, image: i}]}\n")
	s := NewFileSource("file", dir, 0, Options{Log: log})
	scan := func() {
		s.cache = nil // decode again, as a changed file would be
		if _, ok := s.scan(log); !ok {
			t.Fatal("scan failed")
		}
	}
	count := func() int { return strings.Count(buf.String(), "ignored without a cluster") }
	scan()
	scan()
	if n := count(); n != 1 {
		t.Fatalf("%d warning lines after two scans, want 1:\n%s", n, buf.String())
	}
	if !strings.Contains(buf.String(), filepath.Join(dir, "web.yaml")+": default/web: ignored without a cluster: spec.tolerations") {
		t.Errorf("log %q", buf.String())
	}
	write(t, dir, "web.yaml", pod+"  nodeSelector: {a: b}\n")
	scan()
	scan()
	if n := count(); n != 2 {
		t.Fatalf("%d warning lines after the spec changed, want 2:\n%s", n, buf.String())
	}
	if !strings.Contains(buf.String(), "ignored without a cluster: spec.nodeSelector, spec.tolerations") {
		t.Errorf("log %q", buf.String())
	}
}

func TestValidateFilesWarnings(t *testing.T) {
	dir := t.TempDir()
	f := write(t, dir, "web.yaml", podYAML+"  serviceAccountName: sa\n")
	n, warns, errs, err := ValidateFiles([]string{dir}, Options{})
	if err != nil || len(errs) > 0 || n != 1 {
		t.Fatalf("n %d errs %v err %v", n, errs, err)
	}
	if want := f + ": default/web: ignored without a cluster: spec.serviceAccountName"; len(warns) != 1 || warns[0] != want {
		t.Errorf("warnings %q, want %q", warns, want)
	}
}
