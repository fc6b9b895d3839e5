package admission

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
)

// countingView counts the container lookups Admit makes.
type countingView struct {
	view
	lookups map[string]int
}

func (v countingView) ContainersByPod(k string) ([]*model.Container, error) {
	v.lookups[k]++
	return v.view.ContainersByPod(k)
}

// A pod offered again as the object it was admitted with is not looked up
// again: an update of a source with n pods and one new pod makes one
// container lookup, not n+1.
func TestAdmitLooksUpOnlyChangedPods(t *testing.T) {
	const n = 200
	v := countingView{lookups: map[string]int{}}
	var offered []manifest.Desired
	for i := range n {
		d := desired(fmt.Sprintf("p%03d", i), false, v1.ContainerPort{ContainerPort: 80, HostPort: int32(20000 + i), Protocol: v1.ProtocolTCP})
		offered = append(offered, d)
		v.pods = append(v.pods, &model.Pod{Key: key(d), Source: "etcd", Origin: d.Origin, Spec: d.Pod})
	}
	fresh := desired("new", false, v1.ContainerPort{ContainerPort: 80, HostPort: 20000 + n, Protocol: v1.ProtocolTCP})
	dec, err := Admit(v, Update{Source: "etcd", Pods: append(offered, fresh)})
	if err != nil {
		t.Fatal(err)
	}
	if len(dec.Pods) != n+1 || len(dec.Errors) != 0 {
		t.Fatalf("%d pods admitted, errors %v; want %d, none", len(dec.Pods), dec.Errors, n+1)
	}
	got := map[string]*model.Pod{}
	for _, p := range dec.Pods {
		got[p.Key] = p
	}
	for _, p := range v.pods {
		if got[p.Key] != p {
			t.Fatalf("unchanged pod %s is a new object", p.Key)
		}
	}
	if len(v.lookups) != 1 || v.lookups["default/new"] != 1 {
		t.Errorf("container lookups %v, want one, of default/new", v.lookups)
	}
	// A clash with the last of many claims is still found.
	clash := desired("clash", false, v1.ContainerPort{ContainerPort: 80, HostPort: 20000 + n - 1, Protocol: v1.ProtocolTCP})
	dec, err = Admit(v, Update{Source: "etcd", Pods: append(offered, clash)})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("already used by pod default/p%03d", n-1); len(dec.Errors) != 1 || !strings.Contains(dec.Errors[0], want) {
		t.Errorf("errors %v, want one naming %s", dec.Errors, want)
	}
}
