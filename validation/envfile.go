package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "k8s.io/api/core/v1"
)

// fileKeyRef checks an env var's fileKeyRef as the API server does: an
// emptyDir volume of the pod, a relative path without '..', a key that
// makes a variable name. A Memory emptyDir is refused: its tmpfs belongs
// to the engine, and berth reads env files from the pod's directory.
func (v *podValidator) fileKeyRef(r *v1.FileKeySelector, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	vp := p.Child("volumeName")
	var vol *v1.Volume
	for i := range v.spec.Volumes {
		if v.spec.Volumes[i].Name == r.VolumeName {
			vol = &v.spec.Volumes[i]
		}
	}
	switch {
	case r.VolumeName == "":
		errs = append(errs, field.Required(vp, ""))
	case vol == nil:
		errs = append(errs, field.NotFound(vp, r.VolumeName))
	case vol.EmptyDir == nil:
		errs = append(errs, field.Invalid(vp, r.VolumeName, "must name an emptyDir volume"))
	case vol.EmptyDir.Medium == v1.StorageMediumMemory:
		errs = append(errs, notSupported(vp, "a Memory emptyDir is the engine's tmpfs, which berth does not read; use a disk emptyDir"))
	}
	errs = append(errs, validateItemPath(r.Path, p.Child("path"))...)
	kp := p.Child("key")
	switch {
	case r.Key == "":
		errs = append(errs, field.Required(kp, ""))
	case !printableName(r.Key):
		errs = append(errs, field.Invalid(kp, r.Key, "must consist of printable ASCII characters except '='"))
	}
	return errs
}

// printableName reports whether s is printable ASCII without '=': a
// variable name the kubelet accepts.
func printableName(s string) bool {
	for _, r := range s {
		if r < ' ' || r > '~' || r == '=' {
			return false
		}
	}
	return true
}
