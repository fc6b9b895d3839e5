package sources

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/berth-dev/berth/manifest"
)

// dedupe keeps the first pod of each key and reports the others as errors
// of their origins.
func dedupe(pods []manifest.Desired) ([]manifest.Desired, []manifest.ManifestError) {
	first := map[string]string{}
	var kept []manifest.Desired
	var errs []manifest.ManifestError
	for _, d := range pods {
		key := manifest.PodKey(d.Pod.Namespace, d.Pod.Name)
		if origin, ok := first[key]; ok {
			errs = append(errs, PodDuplicate(d, origin))
			continue
		}
		first[key] = d.Origin
		kept = append(kept, d)
	}
	return kept, errs
}

// dedupeObjects keeps the first object of each kind and key and reports
// the others as errors of their origins.
func dedupeObjects(objs []manifest.Object) ([]manifest.Object, []manifest.ManifestError) {
	first := map[string]string{}
	var kept []manifest.Object
	var errs []manifest.ManifestError
	for _, o := range objs {
		ref := objRef(o)
		if origin, ok := first[ref]; ok {
			errs = append(errs, ObjectDuplicate(o, origin))
			continue
		}
		first[ref] = o.Origin
		kept = append(kept, o)
	}
	return kept, errs
}

func objRef(o manifest.Object) string { return o.Kind + "/" + o.Key() }

// PodDuplicate is the error of d, a pod whose key owner (an origin)
// declared first.
func PodDuplicate(d manifest.Desired, owner string) manifest.ManifestError {
	key := manifest.PodKey(d.Pod.Namespace, d.Pod.Name)
	e := field.Duplicate(field.NewPath("metadata", "name"), d.Pod.Name)
	e.Detail = "pod " + key + " is already declared in " + owner
	return manifest.ManifestError{Origin: d.Origin, PodKey: key, Field: e.Field, Err: e.ErrorBody()}
}

// ObjectDuplicate is the error of x, an object whose kind and key owner
// (an origin) declared first.
func ObjectDuplicate(x manifest.Object, owner string) manifest.ManifestError {
	return manifest.ManifestError{Origin: x.Origin, Kind: x.Kind, PodKey: x.Key(), Field: "metadata.name",
		Err: "Duplicate value: " + strings.ToLower(x.Kind) + " " + x.Key() + " is already declared in " + owner}
}
