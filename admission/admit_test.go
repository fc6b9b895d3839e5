package admission

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/resourcehelper"
	"github.com/berth-dev/berth/store"
)

// view is an in-memory View.
type view struct {
	pods    []*model.Pod
	ctrs    map[string][]*model.Container
	sources map[string]*model.Source
	objects []*model.Object
}

func (v view) ObjectsBySource(kind, source string) ([]*model.Object, error) {
	var out []*model.Object
	for _, o := range v.objects {
		if o.Kind == kind && o.Source == source {
			out = append(out, o)
		}
	}
	return out, nil
}

func (v view) Object(kind, key string) (*model.Object, error) {
	for _, o := range v.objects {
		if o.Kind == kind && o.Key == key {
			return o, nil
		}
	}
	return nil, nil
}

func (v view) Pod(k string) (*model.Pod, error) {
	for _, p := range v.pods {
		if p.Key == k {
			return p, nil
		}
	}
	return nil, nil
}

// podsWhere returns the pods that match, ordered by key as the store's
// indexes return them.
func (v view) podsWhere(match func(*model.Pod) bool) ([]*model.Pod, error) {
	var out []*model.Pod
	for _, p := range v.pods {
		if match(p) {
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(a, b *model.Pod) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

func (v view) PodsBySource(source string) ([]*model.Pod, error) {
	return v.podsWhere(func(p *model.Pod) bool { return p.Source == source })
}

func (v view) PodsByHostPort(hp model.HostPort) ([]*model.Pod, error) {
	return v.podsWhere(func(p *model.Pod) bool {
		for o := range model.HostPorts(p.Spec) {
			if hp.Conflicts(o) {
				return true
			}
		}
		return false
	})
}

func (v view) PodsByUID(uid string) ([]*model.Pod, error) {
	return v.podsWhere(func(p *model.Pod) bool { return string(p.Spec.UID) == uid })
}

func (v view) PodsByClaim(key string) ([]*model.Pod, error) {
	return v.podsWhere(func(p *model.Pod) bool { return slices.Contains(model.ClaimKeys(p.Spec), key) })
}

func (v view) Requests() resourcehelper.Requests {
	var sum resourcehelper.Requests
	for _, p := range v.pods {
		sum = sum.Plus(store.Counted(p))
	}
	return sum
}
func (v view) ContainersByPod(k string) ([]*model.Container, error) {
	return v.ctrs[k], nil
}
func (v view) Source(n string) (*model.Source, error) { return v.sources[n], nil }

func desired(name string, hostNet bool, ports ...v1.ContainerPort) manifest.Desired {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{HostNetwork: hostNet, Containers: []v1.Container{{Name: "c", Image: "img", Ports: ports}}}}
	return manifest.Desired{Pod: p, Origin: name + ".yaml"}
}

func TestHostPortClashes(t *testing.T) {
	tcp := v1.ProtocolTCP
	held := desired("held", false, v1.ContainerPort{ContainerPort: 80, HostPort: 8080, HostIP: "10.0.0.1", Protocol: tcp})
	v := view{pods: []*model.Pod{{Key: "default/held", Source: "http", Spec: held.Pod}}}
	for _, tc := range []struct {
		name    string
		d       manifest.Desired
		refused bool
	}{
		{"same port, same address", desired("x", false, v1.ContainerPort{ContainerPort: 1, HostPort: 8080, HostIP: "10.0.0.1", Protocol: tcp}), true},
		{"same port, every address", desired("x", false, v1.ContainerPort{ContainerPort: 1, HostPort: 8080, Protocol: tcp}), true},
		{"hostNetwork binds its containerPort", desired("x", true, v1.ContainerPort{ContainerPort: 8080, Protocol: tcp}), true},
		{"same port, other address", desired("x", false, v1.ContainerPort{ContainerPort: 1, HostPort: 8080, HostIP: "10.0.0.2", Protocol: tcp}), false},
		{"same port, other protocol", desired("x", false, v1.ContainerPort{ContainerPort: 1, HostPort: 8080, Protocol: v1.ProtocolUDP}), false},
		{"no host port", desired("x", false, v1.ContainerPort{ContainerPort: 8080, Protocol: tcp}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Admit(v, Update{Source: "file", Pods: []manifest.Desired{tc.d}})
			if err != nil {
				t.Fatal(err)
			}
			refused := len(d.Pods) == 0
			if refused != tc.refused {
				t.Fatalf("refused = %v, want %v (errors %v)", refused, tc.refused, d.Errors)
			}
			if refused && (len(d.Errors) != 1 || !strings.Contains(d.Errors[0], `already used by a pod of source "http"`)) {
				t.Fatalf("errors %v do not name the holder's source", d.Errors)
			}
			if refused && strings.Contains(d.Errors[0], "held") {
				t.Fatalf("errors %v name another source's pod", d.Errors)
			}
		})
	}
	// The source's own pod is named by its key.
	d, err := Admit(v, Update{Source: "http", Pods: []manifest.Desired{held, desired("x", false, v1.ContainerPort{ContainerPort: 1, HostPort: 8080, Protocol: tcp})}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Errors) != 1 || !strings.Contains(d.Errors[0], "already used by pod default/held") {
		t.Fatalf("errors %v do not name the source's own holder", d.Errors)
	}
}

func TestOnePodPerUIDAndUnsyncedHolder(t *testing.T) {
	other := desired("other", false)
	v := view{
		pods:    []*model.Pod{{Key: "default/other", Source: "http", Spec: other.Pod}},
		ctrs:    map[string][]*model.Container{"default/web": {{ID: "c1", Source: "etcd", State: model.StateRunning}}},
		sources: map[string]*model.Source{"etcd": {Name: "etcd"}},
	}
	same := desired("x", false)
	same.Pod.UID = other.Pod.UID
	d, _ := Admit(v, Update{Source: "file", Pods: []manifest.Desired{same, desired("web", false)}})
	if len(d.Pods) != 0 || len(d.Errors) != 2 {
		t.Fatalf("admitted %d pods, errors %v; want both refused", len(d.Pods), d.Errors)
	}
	if joined := strings.Join(d.Errors, "\n"); !strings.Contains(joined, `is already the uid of a pod of source "http"`) || strings.Contains(joined, "default/other") {
		t.Fatalf("errors %v: the UID's holder of another source must be named by its source only", d.Errors)
	}
	v.sources["etcd"] = &model.Source{Name: "etcd", Synced: true}
	if d, _ := Admit(v, Update{Source: "file", Pods: []manifest.Desired{desired("web", false)}}); len(d.Pods) != 1 {
		t.Fatalf("once its holder synced, the pod is still refused: %v", d.Errors)
	}
}
