package podconfig

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// Objects finds the ConfigMaps and Secrets a pod may use: those of its own
// source. Both return a *MissingError when there is none to use.
type Objects interface {
	ConfigMap(namespace, name string) (*v1.ConfigMap, error)
	Secret(namespace, name string) (*v1.Secret, error)
}

// MissingError is a reference to a ConfigMap, Secret or key that is not
// there; its text is the kubelet's, and a container waits on it with
// CreateContainerConfigError until the object arrives. It never carries a
// value.
type MissingError struct {
	// Kind is "configmap" or "secret", as the kubelet's messages say it.
	Kind, Namespace, Name string
	// Key is set when the object is there but the key is not.
	Key string
	// Detail explains, e.g. that another source owns the object.
	Detail string
}

func (e *MissingError) Error() string {
	var msg string
	switch {
	case e.Key != "" && e.Kind == "secret":
		msg = fmt.Sprintf("couldn't find key %s in Secret %s/%s", e.Key, e.Namespace, e.Name)
	case e.Key != "":
		msg = fmt.Sprintf("couldn't find key %s in ConfigMap %s/%s", e.Key, e.Namespace, e.Name)
	default:
		msg = fmt.Sprintf("%s %q not found", e.Kind, e.Name)
	}
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

// IsMissing reports whether err is (or wraps) a MissingError.
func IsMissing(err error) bool {
	var m *MissingError
	return errors.As(err, &m)
}

// NoObjects is the Objects of a pod that may use none.
type NoObjects struct{}

// ConfigMap is always missing.
func (NoObjects) ConfigMap(_, name string) (*v1.ConfigMap, error) {
	return nil, &MissingError{Kind: "configmap", Name: name}
}

// Secret is always missing.
func (NoObjects) Secret(_, name string) (*v1.Secret, error) {
	return nil, &MissingError{Kind: "secret", Name: name}
}

// objectData is the data of a ConfigMap (data and binaryData) or Secret.
type objectData struct {
	kind, namespace, name string
	data                  map[string][]byte
	// strings are the keys of a ConfigMap's data (not binaryData): what
	// envFrom reads.
	strings map[string]bool
}

// lookup fetches the object of kind ("configmap" or "secret") for a
// reference; optional references to missing objects yield (nil, nil).
func lookup(objs Objects, namespace, kind, name string, optional bool) (*objectData, error) {
	if objs == nil {
		objs = NoObjects{}
	}
	out := &objectData{kind: kind, namespace: namespace, name: name, data: map[string][]byte{}, strings: map[string]bool{}}
	var err error
	switch kind {
	case "configmap":
		var cm *v1.ConfigMap
		if cm, err = objs.ConfigMap(namespace, name); err == nil {
			for k, v := range cm.Data {
				out.data[k] = []byte(v)
				out.strings[k] = true
			}
			for k, v := range cm.BinaryData {
				out.data[k] = v
			}
		}
	default:
		var s *v1.Secret
		if s, err = objs.Secret(namespace, name); err == nil {
			for k, v := range s.Data {
				out.data[k] = v
				out.strings[k] = true
			}
		}
	}
	if err != nil {
		if optional && IsMissing(err) {
			return nil, nil
		}
		return nil, err
	}
	return out, nil
}

// lookups reads each object at most once for one container's env (its
// envFrom and key references often name one ConfigMap many times, and a
// lookup copies the object's data).
type lookups struct {
	objs      Objects
	namespace string
	found     map[string]*objectData
}

func (l *lookups) get(kind, name string, optional bool) (*objectData, error) {
	if o := l.found[kind+"/"+name]; o != nil {
		return o, nil
	}
	o, err := lookup(l.objs, l.namespace, kind, name, optional)
	if o != nil {
		if l.found == nil {
			l.found = map[string]*objectData{}
		}
		l.found[kind+"/"+name] = o
	}
	return o, err
}

// key returns the value of k, or a MissingError naming it.
func (o *objectData) key(k string) ([]byte, error) {
	v, ok := o.data[k]
	if !ok {
		return nil, &MissingError{Kind: o.kind, Namespace: o.namespace, Name: o.name, Key: k}
	}
	return v, nil
}

// validEnvName reports whether an envFrom key makes a variable name the
// kubelet accepts: printable ASCII without '=' (RelaxedEnvironmentVariableValidation).
func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < ' ' || r > '~' || r == '=' {
			return false
		}
	}
	return true
}
