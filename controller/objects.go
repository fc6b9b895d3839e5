package controller

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podconfig"
	"github.com/berth-dev/berth/runtime"
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

// pullCredentials are the registry logins of p's imagePullSecrets, in
// order (the first Secret naming a registry wins), from Secrets of its own
// source of type kubernetes.io/dockerconfigjson or dockercfg. A missing or
// unreadable Secret is skipped with a warning event (rec), as the kubelet pulls
// without it.
func pullCredentials(st *store.Store, rec recorder, p *model.Pod) *runtime.Credentials {
	var creds *runtime.Credentials
	objs := objectsOf(st, p)
	for _, ref := range p.Spec.Spec.ImagePullSecrets {
		s, err := objs.Secret(p.Spec.Namespace, ref.Name)
		var got *runtime.Credentials
		switch {
		case err != nil:
		case s.Type == v1.SecretTypeDockerConfigJson:
			got, err = runtime.ParseCredentials(s.Data[v1.DockerConfigJsonKey], false)
		case s.Type == v1.SecretTypeDockercfg:
			got, err = runtime.ParseCredentials(s.Data[v1.DockerConfigKey], true)
		default:
			err = fmt.Errorf("secret %q is of type %s, not %s", ref.Name, s.Type, v1.SecretTypeDockerConfigJson)
		}
		if err != nil {
			rec.event(podOf(p), "", events.Warning, "FailedToRetrieveImagePullSecret",
				"Unable to retrieve some image pull secrets (%s); attempting to pull the image may not succeed: %v", ref.Name, err)
			continue
		}
		creds = creds.Merge(got)
	}
	return creds
}
