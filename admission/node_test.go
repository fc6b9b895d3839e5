package admission

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
)

var testNode = &Node{Name: "n1", OS: "linux", CPUMilli: 2000, Memory: 1 << 30,
	Labels: map[string]string{"kubernetes.io/hostname": "n1", "kubernetes.io/os": "linux", "disk": "ssd"}}

func res(cpu, mem string) v1.ResourceList {
	rl := v1.ResourceList{}
	if cpu != "" {
		rl[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		rl[v1.ResourceMemory] = resource.MustParse(mem)
	}
	return rl
}

// asking is desired(name) whose one container requests cpu and memory.
func asking(name, cpu, mem string) manifest.Desired {
	d := desired(name, false)
	d.Pod.Spec.Containers[0].Resources.Requests = res(cpu, mem)
	return d
}

func admitted(d Decision, key string) *model.Pod {
	for _, p := range d.Pods {
		if p.Key == key {
			return p
		}
	}
	return nil
}

func TestNodeRefusals(t *testing.T) {
	windows := desired("x", false)
	windows.Pod.Spec.OS = &v1.PodOS{Name: v1.Windows}
	osLabel := desired("x", false)
	osLabel.Pod.Labels = map[string]string{"kubernetes.io/os": "windows"}
	selector := desired("x", false)
	selector.Pod.Spec.NodeSelector = map[string]string{"disk": "hdd"}
	affinity := desired("x", false)
	affinity.Pod.Spec.Affinity = required(expr("gpu", v1.NodeSelectorOpExists))
	both := asking("x", "3", "")
	both.Pod.Spec.NodeSelector = map[string]string{"disk": "hdd"}
	fits := asking("x", "2", "1Gi")
	fits.Pod.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	fits.Pod.Spec.OS = &v1.PodOS{Name: v1.Linux}
	for _, tc := range []struct {
		name string
		d    manifest.Desired
		want string // "" = admitted
	}{
		{"fits exactly", fits, ""},
		{"spec.os", windows, "x.yaml: default/x: PodOSNotSupported: Failed to admit pod as the OS field doesn't match node OS"},
		{"kubernetes.io/os label", osLabel, "x.yaml: default/x: PodOSSelectorNodeLabelDoesNotMatch: Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"},
		{"nodeSelector", selector, "x.yaml: default/x: NodeAffinity: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"},
		{"required node affinity", affinity, "x.yaml: default/x: NodeAffinity: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"},
		{"cpu", asking("x", "2001m", ""), "x.yaml: default/x: OutOfcpu: Node didn't have enough resource: cpu, requested: 2001, used: 0, capacity: 2000"},
		{"memory", asking("x", "", "1025Mi"), "x.yaml: default/x: OutOfmemory: Node didn't have enough resource: memory, requested: 1074790400, used: 0, capacity: 1073741824"},
		{"resources before affinity, as the kubelet", both, "x.yaml: default/x: OutOfcpu: Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Admit(view{}, Update{Source: "file", Pods: []manifest.Desired{tc.d}, Node: testNode})
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if len(d.Pods) != 1 || len(d.Errors) != 0 {
					t.Fatalf("not admitted: pods %d, errors %v", len(d.Pods), d.Errors)
				}
				return
			}
			if len(d.Pods) != 0 || !slices.Equal(d.Errors, []string{tc.want}) {
				t.Fatalf("pods %d, errors %q\nwant refusal %q", len(d.Pods), d.Errors, tc.want)
			}
			// Without node facts nothing of the node is checked.
			d, _ = Admit(view{}, Update{Source: "file", Pods: []manifest.Desired{tc.d}})
			if len(d.Pods) != 1 {
				t.Fatalf("refused without a node: %v", d.Errors)
			}
		})
	}
}

// The node's requests are those of every admitted pod of every source,
// minus the pod's own former spec; a refused edit keeps holding the old
// one, terminal pods hold nothing, and an unchanged pod is not re-checked.
func TestNodeRequestsAddUp(t *testing.T) {
	other := asking("other", "1", "")
	done := asking("done", "1", "")
	v := view{pods: []*model.Pod{
		{Key: "default/other", Source: "http", Spec: other.Pod},
		{Key: "default/done", Source: "http", Spec: done.Pod, Terminal: v1.PodSucceeded},
	}}
	first := asking("a", "600m", "")
	second := asking("b", "500m", "")
	d, err := Admit(v, Update{Source: "file", Pods: []manifest.Desired{first, second}, Node: testNode})
	if err != nil {
		t.Fatal(err)
	}
	if admitted(d, "default/a") == nil {
		t.Fatalf("a refused: %v", d.Errors)
	}
	want := "b.yaml: default/b: OutOfcpu: Node didn't have enough resource: cpu, requested: 500, used: 1600, capacity: 2000"
	if admitted(d, "default/b") != nil || !slices.Equal(d.Errors, []string{want}) {
		t.Fatalf("errors %q, want %q", d.Errors, want)
	}

	// a grows within what it held itself.
	v.pods = append(v.pods, d.Pods...)
	grown := asking("a", "1", "")
	d, _ = Admit(v, Update{Source: "file", Pods: []manifest.Desired{grown}, Node: testNode})
	if p := admitted(d, "default/a"); p == nil || p.Spec != grown.Pod || len(d.Errors) != 0 {
		t.Fatalf("edit within the node refused: %v", d.Errors)
	}
	// An edit beyond it keeps the last good spec, which still holds its cpu.
	greedy := asking("a", "1500m", "")
	d, _ = Admit(v, Update{Source: "file", Pods: []manifest.Desired{greedy, asking("c", "500m", "")}, Node: testNode})
	if p := admitted(d, "default/a"); p == nil || p.Spec != first.Pod || !strings.Contains(p.Error, "OutOfcpu") {
		t.Fatalf("refused edit: pod %+v", p)
	}
	if admitted(d, "default/c") != nil {
		t.Fatalf("c admitted into the cpu a still holds: %v", d.Errors)
	}

	// Unchanged pods are not checked again, even when the node is full.
	full := *testNode
	full.CPUMilli = 100
	d, _ = Admit(v, Update{Source: "file", Pods: []manifest.Desired{first}, Node: &full})
	if admitted(d, "default/a") == nil || len(d.Errors) != 0 {
		t.Fatalf("unchanged pod refused: %v", d.Errors)
	}
}

func TestNodeNameWarning(t *testing.T) {
	elsewhere := desired("x", false)
	elsewhere.Pod.Spec.NodeName = "n2"
	here := desired("y", false)
	here.Pod.Spec.NodeName = "n1"
	d, err := Admit(view{}, Update{Source: "file", Pods: []manifest.Desired{elsewhere, here}, Node: testNode})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`x.yaml: default/x: spec.nodeName: "n2" is not this node ("n1"); berth runs the pod here all the same`}
	if len(d.Pods) != 2 || len(d.Errors) != 0 || !slices.Equal(d.Warnings, want) {
		t.Fatalf("pods %d, errors %q, warnings %q; want both admitted and %q", len(d.Pods), d.Errors, d.Warnings, want)
	}
}
