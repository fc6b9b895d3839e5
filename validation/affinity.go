package validation

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateNodeSelection checks nodeSelector (label names and values) and
// required node affinity (at least one term; operators and their values;
// matchFields on metadata.name only) as the API server does; admission
// matches them against the node. Preferred and pod affinity are not
// enforced and not checked.
func validateNodeSelection(spec *v1.PodSpec, sp *field.Path) field.ErrorList {
	var errs field.ErrorList
	np := sp.Child("nodeSelector")
	for _, k := range sortedKeys(spec.NodeSelector) {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(np, k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(spec.NodeSelector[k]) {
			errs = append(errs, field.Invalid(np.Key(k), spec.NodeSelector[k], msg))
		}
	}
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return errs
	}
	rp := sp.Child("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		errs = append(errs, field.Required(rp, "must have at least one node selector term"))
	}
	for i, t := range terms {
		for j, r := range t.MatchExpressions {
			errs = append(errs, validateLabelRequirement(r, rp.Index(i).Child("matchExpressions").Index(j))...)
		}
		for j, r := range t.MatchFields {
			errs = append(errs, validateFieldRequirement(r, rp.Index(i).Child("matchFields").Index(j))...)
		}
	}
	return errs
}

func validateLabelRequirement(r v1.NodeSelectorRequirement, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.Operator {
	case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			errs = append(errs, field.Required(p.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case v1.NodeSelectorOpExists, v1.NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			errs = append(errs, field.Forbidden(p.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(p.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
		}
	default:
		errs = append(errs, field.Invalid(p.Child("operator"), r.Operator, "not a valid selector operator"))
	}
	for _, msg := range validation.IsQualifiedName(r.Key) {
		errs = append(errs, field.Invalid(p.Child("key"), r.Key, msg))
	}
	return errs
}

func validateFieldRequirement(r v1.NodeSelectorRequirement, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.Operator {
	case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(p.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
		}
	default:
		errs = append(errs, field.Invalid(p.Child("operator"), r.Operator, "not a valid selector operator"))
	}
	if r.Key != "metadata.name" {
		errs = append(errs, field.Invalid(p.Child("key"), r.Key, "not a valid field selector key"))
	}
	return errs
}
