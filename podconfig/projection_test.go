package podconfig

import (
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type oneSecret struct{ s *v1.Secret }

func (o oneSecret) ConfigMap(_, name string) (*v1.ConfigMap, error) {
	return nil, &MissingError{Kind: "configmap", Name: name}
}
func (o oneSecret) Secret(_, name string) (*v1.Secret, error) { return o.s, nil }

// TestProjectionLimits: a volume whose items repeat a key past the file or
// byte limit is refused before its files are built; one within them is
// not.
func TestProjectionLimits(t *testing.T) {
	b := New(Config{NodeInfo: NodeInfo{Memory: 1 << 30}}, nil, nil)
	objs := oneSecret{&v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Data: map[string][]byte{"k": make([]byte, 700<<10)}}}
	vol := func(n int) *v1.Volume {
		v := &v1.Volume{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "big"}}}
		for i := range n {
			v.Secret.Items = append(v.Secret.Items, v1.KeyToPath{Key: "k", Path: "f" + strconv.Itoa(i)})
		}
		return v
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u"}}
	start := time.Now()
	if _, err := b.Projection(pod, vol(30000), objs, time.Now()); err == nil || !strings.Contains(err.Error(), "MiB of files") {
		t.Fatalf("30000 copies of 700 KiB: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the refusal took %s: the payload was built first", d)
	}
	p, err := b.Projection(pod, vol(20), objs, time.Now())
	if err != nil || len(p.Files) != 20 || !p.Tmpfs || p.SizeBytes > 2*MaxProjectedBytes+1<<20 {
		t.Fatalf("20 copies: %d files, tmpfs %v size %d, %v", len(p.Files), p.Tmpfs, p.SizeBytes, err)
	}
	many := &v1.Volume{Name: "d", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{}}}
	for i := range MaxProjectedFiles + 1 {
		many.DownwardAPI.Items = append(many.DownwardAPI.Items, v1.DownwardAPIVolumeFile{Path: "n" + strconv.Itoa(i), FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}})
	}
	if _, err := b.Projection(pod, many, nil, time.Now()); err == nil || !strings.Contains(err.Error(), "more than 4096 files") {
		t.Fatalf("%d downwardAPI files: %v", MaxProjectedFiles+1, err)
	}
}
