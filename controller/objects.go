package controller

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podconfig"
	"github.com/berth-dev/berth/store"
)

// sourceObjects are the ConfigMaps and Secrets one pod may use: those its
// own source declares. An object of the same key from another source is
// missing to it, with the owner named.
type sourceObjects struct {
	store  *store.Store
	source string
}

var _ podconfig.Objects = sourceObjects{}

func (o sourceObjects) get(kind, what, namespace, name string) (*model.Object, error) {
	obj, err := o.store.Object(nil, kind, manifest.PodKey(namespace, name))
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, &podconfig.MissingError{Kind: what, Namespace: namespace, Name: name}
	}
	if obj.Source != o.source {
		return nil, &podconfig.MissingError{Kind: what, Namespace: namespace, Name: name,
			Detail: fmt.Sprintf("source %q declares it; a pod may use only its own source's objects, and this pod is from %q", obj.Source, o.source)}
	}
	return obj, nil
}

func (o sourceObjects) ConfigMap(namespace, name string) (*v1.ConfigMap, error) {
	obj, err := o.get(model.KindConfigMap, "configmap", namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.ConfigMap, nil
}

func (o sourceObjects) Secret(namespace, name string) (*v1.Secret, error) {
	obj, err := o.get(model.KindSecret, "secret", namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.Secret, nil
}
