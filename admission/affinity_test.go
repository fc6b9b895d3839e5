package admission

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func required(terms ...v1.NodeSelectorTerm) *v1.Affinity {
	return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}}
}

func expr(key string, op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorTerm {
	return v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

func TestSelectsNode(t *testing.T) {
	labels := map[string]string{"disk": "ssd", "zone": "a", "cores": "8", "kubernetes.io/hostname": "n1", "odd": "x8"}
	name := func(op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorTerm {
		return v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: op, Values: values}}}
	}
	for _, tc := range []struct {
		name     string
		selector map[string]string
		affinity *v1.Affinity
		want     bool
	}{
		{"nothing asked", nil, nil, true},
		{"nodeSelector present", map[string]string{"disk": "ssd", "zone": "a"}, nil, true},
		{"nodeSelector other value", map[string]string{"disk": "hdd"}, nil, false},
		{"nodeSelector missing label", map[string]string{"gpu": "true"}, nil, false},
		{"affinity without required terms", nil, &v1.Affinity{NodeAffinity: &v1.NodeAffinity{}}, true},
		{"In", nil, required(expr("disk", v1.NodeSelectorOpIn, "nvme", "ssd")), true},
		{"In, other values", nil, required(expr("disk", v1.NodeSelectorOpIn, "hdd")), false},
		{"In, missing label", nil, required(expr("gpu", v1.NodeSelectorOpIn, "true")), false},
		{"In, no values", nil, required(expr("disk", v1.NodeSelectorOpIn)), false},
		{"In, a value that is no label value", nil, required(expr("disk", v1.NodeSelectorOpIn, "ssd", "not/valid")), false},
		{"NotIn", nil, required(expr("disk", v1.NodeSelectorOpNotIn, "hdd")), true},
		{"NotIn, its value", nil, required(expr("disk", v1.NodeSelectorOpNotIn, "ssd")), false},
		{"NotIn, missing label", nil, required(expr("gpu", v1.NodeSelectorOpNotIn, "true")), true},
		{"Exists", nil, required(expr("zone", v1.NodeSelectorOpExists)), true},
		{"Exists, missing", nil, required(expr("gpu", v1.NodeSelectorOpExists)), false},
		{"Exists with values", nil, required(expr("zone", v1.NodeSelectorOpExists, "a")), false},
		{"DoesNotExist", nil, required(expr("gpu", v1.NodeSelectorOpDoesNotExist)), true},
		{"DoesNotExist, present", nil, required(expr("zone", v1.NodeSelectorOpDoesNotExist)), false},
		{"Gt", nil, required(expr("cores", v1.NodeSelectorOpGt, "4")), true},
		{"Gt, equal", nil, required(expr("cores", v1.NodeSelectorOpGt, "8")), false},
		{"Lt", nil, required(expr("cores", v1.NodeSelectorOpLt, "16")), true},
		{"Lt, greater", nil, required(expr("cores", v1.NodeSelectorOpLt, "2")), false},
		{"Gt, label not an integer", nil, required(expr("odd", v1.NodeSelectorOpGt, "1")), false},
		{"Gt, value not an integer", nil, required(expr("cores", v1.NodeSelectorOpGt, "four")), false},
		{"Gt, two values", nil, required(expr("cores", v1.NodeSelectorOpGt, "1", "2")), false},
		{"Gt, missing label", nil, required(expr("gpus", v1.NodeSelectorOpGt, "0")), false},
		{"unknown operator", nil, required(expr("zone", "Near", "a")), false},
		{"invalid key", nil, required(expr("bad key", v1.NodeSelectorOpDoesNotExist)), false},
		{"matchFields In", nil, required(name(v1.NodeSelectorOpIn, "n1")), true},
		{"matchFields In, other node", nil, required(name(v1.NodeSelectorOpIn, "n2")), false},
		{"matchFields NotIn", nil, required(name(v1.NodeSelectorOpNotIn, "n2")), true},
		{"matchFields NotIn, this node", nil, required(name(v1.NodeSelectorOpNotIn, "n1")), false},
		{"matchFields two values", nil, required(name(v1.NodeSelectorOpIn, "n1", "n2")), false},
		{"matchFields other key", nil, required(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{
			{Key: "metadata.uid", Operator: v1.NodeSelectorOpIn, Values: []string{"n1"}}}}), false},
		{"terms are ORed", nil, required(expr("disk", v1.NodeSelectorOpIn, "hdd"), expr("zone", v1.NodeSelectorOpIn, "a")), true},
		{"requirements of a term are ANDed", nil, required(v1.NodeSelectorTerm{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"a"}}},
			MatchFields:      []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n2"}}}}), false},
		{"an empty term matches nothing", nil, required(v1.NodeSelectorTerm{}), false},
		{"no terms match nothing", nil, required(), false},
		{"nodeSelector and affinity both hold", map[string]string{"disk": "hdd"}, required(expr("zone", v1.NodeSelectorOpExists)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &v1.PodSpec{NodeSelector: tc.selector, Affinity: tc.affinity}
			if got := selectsNode(spec, "n1", labels); got != tc.want {
				t.Errorf("selectsNode = %v, want %v", got, tc.want)
			}
		})
	}
}
