package store

import (
	"errors"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/resourcehelper"
)

var errRead = errors.New("read only")

// read runs fn on a View of s, writing nothing.
func read(t *testing.T, s *Store, fn func(View)) {
	t.Helper()
	if err := s.ApplySource("probe", func(v View) (SourceWrite, error) { fn(v); return SourceWrite{}, errRead }); !errors.Is(err, errRead) {
		t.Fatal(err)
	}
}

func holdingPod(name, uid, claim string, cpuMilli int64, ports ...v1.ContainerPort) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(uid)},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Ports: ports, Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: *resource.NewMilliQuantity(cpuMilli, resource.DecimalSI)}}}}}}
	if claim != "" {
		p.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
	}
	return p
}

func keysOf(pods []*model.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Key)
	}
	return out
}

// The pods table indexes host ports, UIDs and claims from each pod's spec
// and sums the requests of the pods that have not ended, whoever writes
// them: an edit, a status write, an end and a removal all keep them true.
func TestHoldsIndexes(t *testing.T) {
	s, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	tcp := v1.ProtocolTCP
	put := func(key string, spec *v1.Pod) {
		t.Helper()
		if err := s.UpsertPod(&model.Pod{Key: key, Source: "file", Spec: spec}); err != nil {
			t.Fatal(err)
		}
	}
	put("default/a", holdingPod("a", "uid-a", "data", 100, v1.ContainerPort{HostPort: 80, HostIP: "10.0.0.1", Protocol: tcp}))
	put("default/b", holdingPod("b", "uid-b", "", 200, v1.ContainerPort{HostPort: 80, Protocol: tcp}))
	put("default/c", holdingPod("c", "uid-a", "data", 400, v1.ContainerPort{HostPort: 80, HostIP: "10.0.0.2", Protocol: tcp}))
	check := func(step string, want map[model.HostPort][]string, uidA, claim []string, r resourcehelper.Requests) {
		t.Helper()
		read(t, s, func(v View) {
			for hp, keys := range want {
				got, err := v.PodsByHostPort(hp)
				if err != nil || !slices.Equal(keysOf(got), keys) {
					t.Errorf("%s: pods by host port %v: %v %v, want %v", step, hp, keysOf(got), err, keys)
				}
			}
			if got, err := v.PodsByUID("uid-a"); err != nil || !slices.Equal(keysOf(got), uidA) {
				t.Errorf("%s: pods by uid-a: %v %v, want %v", step, keysOf(got), err, uidA)
			}
			if got, err := v.PodsByClaim("default/data"); err != nil || !slices.Equal(keysOf(got), claim) {
				t.Errorf("%s: pods by claim: %v %v, want %v", step, keysOf(got), err, claim)
			}
			if got := v.Requests(); got != r {
				t.Errorf("%s: requests %+v, want %+v", step, got, r)
			}
		})
	}
	on := func(ip string, port int32, proto v1.Protocol) model.HostPort {
		return model.HostPort{IP: ip, Protocol: proto, Port: port}
	}
	check("written", map[model.HostPort][]string{
		on("0.0.0.0", 80, tcp):   {"default/a", "default/b", "default/c"},
		on("10.0.0.1", 80, tcp):  {"default/a", "default/b"},
		on("10.0.0.3", 80, tcp):  {"default/b"},
		on("0.0.0.0", 8080, tcp): nil,
		on("0.0.0.0", 80, "UDP"): nil,
	}, []string{"default/a", "default/c"}, []string{"default/a", "default/c"}, resourcehelper.Requests{CPUMilli: 700})

	// An edit moves a's port and claim and grows it; c ends; b's status is
	// written.
	put("default/a", holdingPod("a", "uid-a", "other", 150, v1.ContainerPort{HostPort: 81, Protocol: tcp}))
	if _, err := s.UpdatePod("default/c", func(p *model.Pod) bool { p.Terminal = v1.PodSucceeded; return true }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdatePod("default/b", func(p *model.Pod) bool { p.Status.Message = "x"; return true }); err != nil {
		t.Fatal(err)
	}
	check("edited", map[model.HostPort][]string{
		on("0.0.0.0", 80, tcp):  {"default/b", "default/c"},
		on("10.0.0.1", 81, tcp): {"default/a"},
	}, []string{"default/a", "default/c"}, []string{"default/c"}, resourcehelper.Requests{CPUMilli: 350})

	if err := s.DeletePod("default/a"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePod("default/c"); err != nil {
		t.Fatal(err)
	}
	check("deleted", map[model.HostPort][]string{
		on("0.0.0.0", 80, tcp): {"default/b"},
		on("0.0.0.0", 81, tcp): nil,
	}, nil, nil, resourcehelper.Requests{CPUMilli: 200})
}
