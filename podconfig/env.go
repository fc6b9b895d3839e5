package podconfig

import (
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
)

// envResolver resolves what a container's env and downwardAPI volumes
// read: the pod's and the node's fields, resources (the node's capacity
// standing for a missing limit) and keys of env files. It holds no state
// of its own: safe for concurrent use.
type envResolver struct {
	cfg   Config
	paths Paths
}

// containerEnv resolves the container's env as the kubelet's
// makeEnvironmentVariables: first envFrom (each ConfigMap's or Secret's
// keys, with the prefix, in key order; keys that make no variable name are
// skipped and returned), then env in order: a value expanding $(NAME)
// against the entries before it, valueFrom from the downward API, a key of
// a ConfigMap or Secret or of an env file in an emptyDir; a later duplicate
// replaces the earlier value. A missing non-optional object or key is a
// *MissingError; a missing non-optional env file or key, an error.
func (er *envResolver) containerEnv(pod *v1.Pod, ctr *v1.Container, ips PodIPs, objs Objects) (env []string, skipped []string, err error) {
	objects := &lookups{objs: objs, namespace: pod.Namespace}
	vars := map[string]string{}
	var order []string
	set := func(name, val string) {
		if _, seen := vars[name]; !seen {
			order = append(order, name)
		}
		vars[name] = val
	}
	for _, from := range ctr.EnvFrom {
		kind, name, optional := "configmap", "", false
		switch {
		case from.ConfigMapRef != nil:
			name, optional = from.ConfigMapRef.Name, from.ConfigMapRef.Optional != nil && *from.ConfigMapRef.Optional
		case from.SecretRef != nil:
			kind, name, optional = "secret", from.SecretRef.Name, from.SecretRef.Optional != nil && *from.SecretRef.Optional
		default:
			continue
		}
		obj, err := objects.get(kind, name, optional)
		if err != nil {
			return nil, nil, fmt.Errorf("envFrom: %w", err)
		}
		if obj == nil {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(obj.data)) {
			if !obj.strings[k] {
				continue
			}
			if !validEnvName(from.Prefix + k) {
				skipped = append(skipped, from.Prefix+k)
				continue
			}
			set(from.Prefix+k, string(obj.data[k]))
		}
	}
	for _, e := range ctr.Env {
		val := e.Value
		switch {
		case e.ValueFrom == nil:
			val = expand(val, mappingFor(vars))
		case e.ValueFrom.FieldRef != nil:
			v, err := er.fieldRefValue(pod, e.ValueFrom.FieldRef.FieldPath, ips)
			if err != nil {
				return nil, nil, fmt.Errorf("env %s: %w", e.Name, err)
			}
			val = v
		case e.ValueFrom.ResourceFieldRef != nil:
			v, err := er.resourceFieldValue(pod, ctr, e.ValueFrom.ResourceFieldRef)
			if err != nil {
				return nil, nil, fmt.Errorf("env %s: %w", e.Name, err)
			}
			val = v
		case e.ValueFrom.ConfigMapKeyRef != nil || e.ValueFrom.SecretKeyRef != nil:
			kind, sel := "configmap", v1.LocalObjectReference{}
			var key string
			var opt *bool
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				sel, key, opt = r.LocalObjectReference, r.Key, r.Optional
			} else {
				r := e.ValueFrom.SecretKeyRef
				kind, sel, key, opt = "secret", r.LocalObjectReference, r.Key, r.Optional
			}
			optional := opt != nil && *opt
			obj, err := objects.get(kind, sel.Name, optional)
			if err != nil {
				return nil, nil, err
			}
			if obj == nil {
				continue
			}
			v, err := obj.key(key)
			if err != nil {
				if optional {
					continue
				}
				return nil, nil, err
			}
			val = string(v)
		case e.ValueFrom.FileKeyRef != nil:
			v, ok, err := er.fileKeyValue(pod, e.ValueFrom.FileKeyRef)
			if err != nil {
				return nil, nil, fmt.Errorf("env %s: %w", e.Name, err)
			}
			if !ok {
				continue
			}
			val = v
		default:
			return nil, nil, fmt.Errorf("env %s: valueFrom source not supported by berth", e.Name)
		}
		set(e.Name, val)
	}
	env = make([]string, 0, len(order))
	for _, n := range order {
		env = append(env, n+"="+vars[n])
	}
	return env, skipped, nil
}
