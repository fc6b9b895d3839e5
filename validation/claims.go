package validation

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// claimAccessModes are the access modes a claim may ask for. berth's
// claims are node-local volumes, so every mode is met by the one node;
// ReadWriteOncePod is the only one that restricts pods (see admission).
var claimAccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce, v1.ReadOnlyMany, v1.ReadWriteMany, v1.ReadWriteOncePod}

// validateClaim checks a PersistentVolumeClaim as the API server does for
// what berth serves: access modes given and known, a storage request, a
// filesystem volume, and the fields berth cannot honour (an existing
// volume, a data source, block mode) refused by the field table.
func validateClaim(c *v1.PersistentVolumeClaim) field.ErrorList {
	sp := field.NewPath("spec")
	errs := objectRefusedFields(c)
	if len(c.Spec.AccessModes) == 0 {
		errs = append(errs, field.Required(sp.Child("accessModes"), "at least 1 access mode is required"))
	}
	for i, m := range c.Spec.AccessModes {
		if !slices.Contains(claimAccessModes, m) {
			errs = append(errs, field.NotSupported(sp.Child("accessModes").Index(i), m, claimAccessModes))
		}
	}
	if slices.Contains(c.Spec.AccessModes, v1.ReadWriteOncePod) && len(c.Spec.AccessModes) > 1 {
		errs = append(errs, field.Forbidden(sp.Child("accessModes"), "may not use ReadWriteOncePod with other access modes"))
	}
	rp := sp.Child("resources", "requests")
	q, ok := c.Spec.Resources.Requests[v1.ResourceStorage]
	switch {
	case !ok:
		errs = append(errs, field.Required(rp.Key(string(v1.ResourceStorage)), ""))
	case q.Sign() <= 0:
		errs = append(errs, field.Invalid(rp.Key(string(v1.ResourceStorage)), q.String(), "must be greater than zero"))
	}
	if m := c.Spec.VolumeMode; m != nil && *m != v1.PersistentVolumeFilesystem {
		errs = append(errs, field.NotSupported(sp.Child("volumeMode"), *m, []v1.PersistentVolumeMode{v1.PersistentVolumeFilesystem}))
	}
	return errs
}

// validateClaimSource checks a pod's persistentVolumeClaim volume.
func validateClaimSource(s *v1.PersistentVolumeClaimVolumeSource, p *field.Path) field.ErrorList {
	cp := p.Child("persistentVolumeClaim", "claimName")
	if s.ClaimName == "" {
		return field.ErrorList{field.Required(cp, "")}
	}
	return validateObjectName(s.ClaimName, cp)
}
