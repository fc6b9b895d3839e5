package validation_test

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-dev/berth/validation"
)

func nodeTerms(terms ...v1.NodeSelectorTerm) *v1.Affinity {
	return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}}
}

func labelReq(key string, op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorTerm {
	return v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

// Node selection, spec.os and pod-level resources are accepted by
// validation (admission matches them against the node) when the API server
// would accept them.
func TestNodeFieldsAccepted(t *testing.T) {
	for name, mutate := range map[string]func(p *v1.Pod){
		"nodeSelector": func(p *v1.Pod) {
			p.Spec.NodeSelector = map[string]string{"disk": "ssd", "topology.kubernetes.io/zone": ""}
		},
		"every operator": func(p *v1.Pod) {
			p.Spec.Affinity = nodeTerms(labelReq("a", v1.NodeSelectorOpIn, "x"), labelReq("a", v1.NodeSelectorOpNotIn, "x"),
				labelReq("a", v1.NodeSelectorOpExists), labelReq("a", v1.NodeSelectorOpDoesNotExist),
				labelReq("a", v1.NodeSelectorOpGt, "1"), labelReq("a", v1.NodeSelectorOpLt, "1"),
				v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpNotIn, Values: []string{"n"}}}})
		},
		"preferred and pod affinity are not checked": func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{}}},
				PodAntiAffinity: &v1.PodAntiAffinity{}}
		},
		"os windows": func(p *v1.Pod) { p.Spec.OS = &v1.PodOS{Name: v1.Windows} },
		"pod resources": func(p *v1.Pod) {
			p.Spec.Resources = &v1.ResourceRequirements{Requests: resList("1", "64Mi"), Limits: resList("2", "128Mi")}
			p.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: resList("500m", "32Mi"), Limits: resList("2", "128Mi")}
		},
		"pod limits only": func(p *v1.Pod) { p.Spec.Resources = &v1.ResourceRequirements{Limits: resList("", "200Mi")} },
	} {
		t.Run(name, func(t *testing.T) {
			if errs := specErrs(t, mutate, validation.Options{}); len(errs) > 0 {
				t.Fatalf("refused: %q", errs)
			}
		})
	}
}

func TestNodeFieldsRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(p *v1.Pod)
		want   string
	}{
		{"nodeSelector key", func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"bad key": "x"} },
			`spec.nodeSelector: Invalid value: "bad key"`},
		{"nodeSelector value", func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "not ok"} },
			`spec.nodeSelector[disk]: Invalid value: "not ok"`},
		{"no terms", func(p *v1.Pod) { p.Spec.Affinity = nodeTerms() },
			"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: must have at least one node selector term"},
		{"In without values", func(p *v1.Pod) { p.Spec.Affinity = nodeTerms(labelReq("a", v1.NodeSelectorOpIn)) },
			"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: Required value"},
		{"Exists with values", func(p *v1.Pod) { p.Spec.Affinity = nodeTerms(labelReq("a", v1.NodeSelectorOpExists, "x")) },
			"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: Forbidden"},
		{"Gt with two values", func(p *v1.Pod) { p.Spec.Affinity = nodeTerms(labelReq("a", v1.NodeSelectorOpGt, "1", "2")) },
			"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified single value"},
		{"unknown operator", func(p *v1.Pod) { p.Spec.Affinity = nodeTerms(labelReq("a", "Near", "x")) },
			`spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Near"`},
		{"requirement key", func(p *v1.Pod) { p.Spec.Affinity = nodeTerms(labelReq("bad key", v1.NodeSelectorOpExists)) },
			`spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: "bad key"`},
		{"matchFields key", func(p *v1.Pod) {
			p.Spec.Affinity = nodeTerms(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.uid", Operator: v1.NodeSelectorOpIn, Values: []string{"x"}}}})
		}, `spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].key: Invalid value: "metadata.uid": not a valid field selector key`},
		{"matchFields operator", func(p *v1.Pod) {
			p.Spec.Affinity = nodeTerms(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpExists}}})
		}, `spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].operator: Invalid value: "Exists"`},
		{"os name", func(p *v1.Pod) { p.Spec.OS = &v1.PodOS{Name: "plan9"} }, `spec.os.name: Unsupported value: "plan9"`},
		{"pod-level ephemeral-storage", func(p *v1.Pod) {
			p.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse("1Gi")}}
		}, `spec.resources.limits[ephemeral-storage]: Unsupported value: "ephemeral-storage": supported values: "cpu", "memory"`},
		{"pod-level hugepages", func(p *v1.Pod) {
			p.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{"hugepages-2Mi": resource.MustParse("2Mi")}}
		}, "spec.resources.limits[hugepages-2Mi]: Forbidden: not supported by berth (hugepages are not implemented)"},
		{"negative", func(p *v1.Pod) { p.Spec.Resources = &v1.ResourceRequirements{Requests: resList("-1", "")} },
			`spec.resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0`},
		{"requests above limits", func(p *v1.Pod) {
			p.Spec.Resources = &v1.ResourceRequirements{Requests: resList("", "2Gi"), Limits: resList("", "1Gi")}
		}, `spec.resources.requests[memory]: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi`},
		{"below the containers' requests", func(p *v1.Pod) {
			p.Spec.Resources = &v1.ResourceRequirements{Requests: resList("500m", "")}
			p.Spec.Containers[0].Resources.Requests = resList("400m", "")
			p.Spec.Containers[1].Resources.Limits = resList("200m", "") // its request, defaulted
		}, `spec.resources.requests[cpu]: Invalid value: "500m": must be greater than or equal to aggregate container requests of 600m`},
		{"a container's limit above the pod's", func(p *v1.Pod) {
			p.Spec.Resources = &v1.ResourceRequirements{Limits: resList("", "100Mi")}
			p.Spec.Containers[1].Resources.Limits = resList("", "200Mi")
		}, `spec.containers[1].resources.limits[memory]: Invalid value: "200Mi": must be less than or equal to pod limits of 100Mi`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := specErrs(t, tc.mutate, validation.Options{})
			if !slices.ContainsFunc(errs, func(e string) bool { return strings.HasPrefix(e, tc.want) }) {
				t.Errorf("got %q\nwant %q", errs, tc.want)
			}
		})
	}
}
