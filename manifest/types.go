package manifest

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Desired is one validated, defaulted pod and where it came from.
type Desired struct {
	Pod    *v1.Pod
	Origin string // file path, URL or etcd key
	// DeclaredUID is the metadata.uid the manifest declared ("" for
	// none); Pod.UID was derived from it (Default). A manifest written
	// back from Pod keeps the pod's identity only with this UID.
	DeclaredUID types.UID
}

// ManifestError is one rejected manifest or pod. When PodKey is empty the
// whole origin failed to decode, and the pods it held before are kept.
type ManifestError struct {
	Origin string
	// Kind is "" for a pod, else the kind of the object (ConfigMap, Secret)
	// PodKey names.
	Kind   string
	PodKey string // "namespace/name" when known
	Field  string // JSON path of the bad field, e.g. spec.containers[0].image
	Err    string
}

func (e ManifestError) Error() string {
	s := e.Origin
	if e.PodKey != "" {
		s += ": "
		if e.Kind != "" {
			s += strings.ToLower(e.Kind) + " "
		}
		s += e.PodKey
	}
	if e.Field != "" {
		s += ": " + e.Field
	}
	return s + ": " + e.Err
}
