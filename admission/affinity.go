package admission

import (
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// nodeNameField is the one node field a matchFields requirement may name.
const nodeNameField = "metadata.name"

// selectsNode reports whether spec's nodeSelector and required node
// affinity select the node of this name and these labels, as the kubelet's
// GetRequiredNodeAffinity(pod).Match does: every nodeSelector pair present,
// and at least one nodeSelectorTerm matching. A term matches when all its
// matchExpressions and matchFields do; an empty term, and a term with a
// requirement the API would reject, match nothing.
func selectsNode(spec *v1.PodSpec, name string, labels map[string]string) bool {
	for k, want := range spec.NodeSelector {
		if got, ok := labels[k]; !ok || got != want {
			return false
		}
	}
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	return slices.ContainsFunc(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms,
		func(t v1.NodeSelectorTerm) bool { return termMatches(t, name, labels) })
}

func termMatches(t v1.NodeSelectorTerm, name string, labels map[string]string) bool {
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		return false
	}
	for _, r := range t.MatchExpressions {
		if !labelMatches(r, labels) {
			return false
		}
	}
	for _, r := range t.MatchFields {
		if !fieldMatches(r, name) {
			return false
		}
	}
	return true
}

// labelMatches applies one matchExpressions requirement with
// labels.Requirement's semantics: NotIn and DoesNotExist hold for a missing
// label; Gt and Lt compare integers and fail on a label that is not one.
func labelMatches(r v1.NodeSelectorRequirement, labels map[string]string) bool {
	if len(validation.IsQualifiedName(r.Key)) > 0 {
		return false
	}
	got, has := labels[r.Key]
	switch r.Operator {
	case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			return false
		}
		for _, v := range r.Values {
			if len(validation.IsValidLabelValue(v)) > 0 {
				return false
			}
		}
		in := has && slices.Contains(r.Values, got)
		return in == (r.Operator == v1.NodeSelectorOpIn)
	case v1.NodeSelectorOpExists, v1.NodeSelectorOpDoesNotExist:
		return len(r.Values) == 0 && has == (r.Operator == v1.NodeSelectorOpExists)
	case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			return false
		}
		want, err := strconv.ParseInt(r.Values[0], 10, 64)
		if err != nil || !has {
			return false
		}
		n, err := strconv.ParseInt(got, 10, 64)
		if err != nil {
			return false
		}
		if r.Operator == v1.NodeSelectorOpGt {
			return n > want
		}
		return n < want
	}
	return false
}

// fieldMatches applies one matchFields requirement: metadata.name, In or
// NotIn, one value.
func fieldMatches(r v1.NodeSelectorRequirement, name string) bool {
	if r.Key != nodeNameField || len(r.Values) != 1 {
		return false
	}
	switch r.Operator {
	case v1.NodeSelectorOpIn:
		return r.Values[0] == name
	case v1.NodeSelectorOpNotIn:
		return r.Values[0] != name
	}
	return false
}
