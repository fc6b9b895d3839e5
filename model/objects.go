package model

import (
	v1 "k8s.io/api/core/v1"
)

// Kinds of the objects pods use beside themselves.
const (
	KindConfigMap = "ConfigMap"
	KindSecret    = "Secret"
	KindPVC       = "PersistentVolumeClaim"
)

// ObjectKinds are the kinds of objects sources declare beside pods.
var ObjectKinds = []string{KindConfigMap, KindSecret, KindPVC}

// Object is one ConfigMap, Secret or PersistentVolumeClaim as accepted from
// a source. Exactly the field of its Kind is set; Secret data is never
// logged or served.
//
// Values read from the store are shared with it: never mutate them.
type Object struct {
	Version
	Kind   string
	Key    string // "namespace/name"
	Source string
	Origin string
	// Ref is ObjectRef(Kind, Key): the store's id of the object.
	Ref       string
	ConfigMap *v1.ConfigMap
	Secret    *v1.Secret
	PVC       *v1.PersistentVolumeClaim
	// Error is the last rejected update of this object, kept while the
	// last good one stays. Empty when the latest update was accepted.
	Error string
}

// ObjectRef names an object of kind in namespace/name key; pods list the
// refs of the objects they use (Pod.Refs).
func ObjectRef(kind, key string) string { return kind + "/" + key }

// Immutable reports whether the object declared immutable: true.
func (o *Object) Immutable() bool {
	var im *bool
	switch {
	case o.ConfigMap != nil:
		im = o.ConfigMap.Immutable
	case o.Secret != nil:
		im = o.Secret.Immutable
	}
	return im != nil && *im
}
