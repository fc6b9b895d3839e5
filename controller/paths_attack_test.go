package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/runtime"
)

// escapingUID is a pod UID that walks from root_dir/pods/<uid> to target,
// the audit's "aaaaaaaa/../../../../<dir>".
func escapingUID(target string) string {
	return "aaaaaaaa/" + strings.Repeat("../", 32) + strings.TrimPrefix(target, "/")
}

// victimDir is a host directory outside root_dir holding one file, and a
// check that it is still there, untouched and with nothing added.
func victimDir(t *testing.T) (string, func()) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "precious"), []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, func() {
		t.Helper()
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatalf("the directory outside root_dir is gone: %v", err)
		}
		if len(ents) != 1 || ents[0].Name() != "precious" {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Errorf("berth created %v in a directory outside root_dir", names)
		}
	}
}

// TestHostileUIDStaysInRootDir: a manifest's UID that is not one path
// element must not make berth create, chmod or remove anything outside
// root_dir, whatever the sources let through.
func TestHostileUIDStaysInRootDir(t *testing.T) {
	h := newHarness(t)
	victim, check := victimDir(t)
	p := testPod("web", ctr("a", "app:1"))
	p.UID = types.UID(escapingUID(victim))
	p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/data"}}
	h.put(p)
	_, _ = h.ctrl.Reconcile(context.Background(), "default/web")
	h.ctrl.ops.wait()
	check()
	for _, ct := range h.running("default/web") {
		if ct.Name != "POD" {
			t.Errorf("container %s started for a pod whose UID is not one path element", ct.Name)
		}
	}
	_ = h.st.DeletePod("default/web")
	for range 3 {
		_, _ = h.ctrl.Reconcile(context.Background(), "default/web")
		h.ctrl.ops.wait()
	}
	check()
}

// TestHostileUIDLabelNotRemoved: a managed container whose pod UID label
// escapes root_dir (a container made by hand, or by an older berth) is
// collected without removing the directory the label names.
func TestHostileUIDLabelNotRemoved(t *testing.T) {
	h := newHarness(t)
	victim, check := victimDir(t)
	id, err := h.rt.CreateContainer(context.Background(), &runtime.ContainerConfig{Name: "berth_a_web_default_x_0", Image: "app:1",
		Labels: map[string]string{runtime.LabelManaged: "true", runtime.LabelNode: "n1", runtime.LabelSource: "file",
			runtime.LabelPodNamespace: "default", runtime.LabelPodName: "web", runtime.LabelContainerName: "a",
			runtime.LabelPodUID: escapingUID(victim)}})
	if err != nil {
		t.Fatal(err)
	}
	h.ctrl.obs.refresh(context.Background(), id)
	h.settle("default/web")
	if _, err := h.rt.InspectContainer(context.Background(), id); err == nil {
		t.Error("the orphaned container was not collected")
	}
	check()
}
