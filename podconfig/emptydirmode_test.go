package podconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/berth-dev/berth/podfs"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/runtime/fake"
)

// emptyDir.mode replaces 0777 on the directory, on a subPath made inside it
// and on a Memory emptyDir's tmpfs; an fsGroup adds group rwx and setgid
// (kubernetes/website pods/emptydir-volume-mode.yaml sets 01777).
func TestEmptyDirMode(t *testing.T) {
	c := mapper(t)
	rt := fake.New(nil)
	root := podfs.New(c.cfg.RootDir)
	cases := []struct {
		name    string
		mode    *int32
		fsGroup *int64
		want    os.FileMode
		bits    uint32
	}{
		{"sticky", ptr.To[int32](0o1777), nil, 0o777 | os.ModeSticky, 0o1777},
		{"private", ptr.To[int32](0o700), nil, 0o700, 0o700},
		{"fsGroup", ptr.To[int32](0o750), ptr.To[int64](2000), 0o770 | os.ModeSetgid, 0o2770},
		{"default", nil, nil, 0o777, 0o777},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := specPod(func(p *v1.Pod) {
				p.UID = types.UID(fmt.Sprintf("0123abcd-0000-0000-0000-%012d", i))
				if tc.fsGroup != nil {
					p.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: tc.fsGroup}
				}
				p.Spec.Volumes = []v1.Volume{
					{Name: "tmp", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Mode: tc.mode}}},
					{Name: "shm", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory, Mode: tc.mode}}},
				}
				p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "tmp", MountPath: "/sub", SubPath: "made"}}
			})
			t.Cleanup(func() {
				if err := root.RemovePod(string(p.Spec.UID)); err != nil {
					t.Error(err)
				}
			})
			if err := c.EnsureVolumes(t.Context(), rt, p, true); err != nil {
				t.Fatal(err)
			}
			build(t, c, p, runtime.ImageInfo{})
			dir, err := c.emptyDirPath(p.Spec, "tmp")
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range []string{dir, filepath.Join(dir, "made")} {
				fi, err := os.Stat(d)
				if err != nil {
					t.Fatal(err)
				}
				if got := fi.Mode() & (os.ModePerm | os.ModeSticky | os.ModeSetgid); got != tc.want {
					t.Errorf("%s: mode %v, want %v", d, got, tc.want)
				}
			}
			v := rt.Volumes()["berth-"+string(p.Spec.UID)+"-shm"]
			if v.Mode != tc.bits {
				t.Errorf("memory emptyDir mode %o, want %o", v.Mode, tc.bits)
			}
		})
	}
}
