package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/validation"
)

// Object is one validated ConfigMap or Secret and where it came from. Exactly
// the field of Kind is set. A Secret's stringData is already merged into its
// data.
type Object struct {
	Kind      string // model.KindConfigMap, model.KindSecret or model.KindPVC
	ConfigMap *v1.ConfigMap
	Secret    *v1.Secret
	PVC       *v1.PersistentVolumeClaim
	Origin    string
}

// Key is the object's "namespace/name".
func (o Object) Key() string {
	switch {
	case o.ConfigMap != nil:
		return PodKey(o.ConfigMap.Namespace, o.ConfigMap.Name)
	case o.PVC != nil:
		return PodKey(o.PVC.Namespace, o.PVC.Name)
	}
	return PodKey(o.Secret.Namespace, o.Secret.Name)
}

// objectKey is the key of an object, "" when it has no name.
func objectKey(namespace, name string) string {
	if name == "" {
		return ""
	}
	return PodKey(namespace, name)
}

// configObject decodes, defaults and validates one ConfigMap or Secret.
// Messages never carry a Secret's values.
func (d *decoder) configObject(j []byte, prefix, kind string) {
	var meta struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(j, &meta)
	key := objectKey(meta.Metadata.Namespace, meta.Metadata.Name)
	ed := &kindDecoder{d: d, kind: kind, key: key, prefix: prefix}
	var obj Object
	switch kind {
	case model.KindConfigMap:
		cm := &v1.ConfigMap{}
		if !ed.unmarshal(j, cm) {
			return
		}
		if cm.Namespace == "" {
			cm.Namespace = v1.NamespaceDefault
		}
		ed.add(validation.ConfigMap(cm)...)
		obj = Object{Kind: kind, ConfigMap: cm, Origin: d.origin}
	case model.KindSecret:
		s := &v1.Secret{}
		if !ed.unmarshal(j, s) {
			return
		}
		if s.Namespace == "" {
			s.Namespace = v1.NamespaceDefault
		}
		if s.Type == "" {
			s.Type = v1.SecretTypeOpaque
		}
		if len(s.StringData) > 0 {
			if s.Data == nil {
				s.Data = map[string][]byte{}
			}
			for k, v := range s.StringData {
				s.Data[k] = []byte(v)
			}
			for _, k := range slices.Sorted(maps.Keys(s.StringData)) {
				for _, msg := range utilvalidation.IsConfigMapKey(k) {
					ed.add(field.Invalid(field.NewPath("stringData").Key(k), k, msg))
				}
			}
			s.StringData = nil
		}
		ed.add(validation.Secret(s)...)
		obj = Object{Kind: kind, Secret: s, Origin: d.origin}
	case model.KindPVC:
		c := &v1.PersistentVolumeClaim{}
		if !ed.unmarshal(j, c) {
			return
		}
		if c.Namespace == "" {
			c.Namespace = v1.NamespaceDefault
		}
		c.Status = v1.PersistentVolumeClaimStatus{} // berth's to report
		ed.add(validation.Claim(c)...)
		obj = Object{Kind: kind, PVC: c, Origin: d.origin}
	}
	if ed.failed {
		return
	}
	if d.seenObj[kind+"/"+key] {
		e := field.Duplicate(field.NewPath("metadata", "name"), meta.Metadata.Name)
		e.Detail = kind + " " + key + " is declared twice in this origin"
		ed.add(e)
		return
	}
	d.seenObj[kind+"/"+key] = true
	d.objects = append(d.objects, obj)
}

// kindDecoder records the errors of one object of kind.
type kindDecoder struct {
	d         *decoder
	kind, key string
	prefix    string
	failed    bool
}

func (k *kindDecoder) add(errs ...*field.Error) {
	for _, e := range errs {
		k.failed = true
		k.d.failKind(k.kind, k.key, joinPath(k.key, k.prefix, e.Field), e.ErrorBody())
	}
}

// unmarshal decodes strictly; type errors name the field, never the value.
func (k *kindDecoder) unmarshal(j []byte, v any) bool {
	strict, err := sigsjson.UnmarshalStrict(j, v)
	if err != nil {
		k.failed = true
		k.d.failKind(k.kind, k.key, k.prefix, redactedJSONError(j, err))
		return false
	}
	for _, e := range strict {
		msg := "unknown field"
		if fe, ok := e.(sigsjson.FieldError); ok {
			if !strings.HasPrefix(e.Error(), "unknown field") {
				msg = "duplicate field"
			}
			k.add(&field.Error{Type: field.ErrorTypeForbidden, Field: fe.FieldPath(), Detail: msg})
			continue
		}
		k.add(field.Forbidden(nil, e.Error()))
	}
	return len(strict) == 0
}

func redactedJSONError(j []byte, err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s: Invalid value: expected %s", typeErrorPath(j, te), te.Type)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "invalid JSON"
	}
	if strings.Contains(err.Error(), "illegal base64") {
		return "data: values must be base64"
	}
	return "invalid object"
}

// DeepCopy returns o with its own copy of the object.
func (o Object) DeepCopy() Object {
	o.ConfigMap = o.ConfigMap.DeepCopy()
	o.Secret = o.Secret.DeepCopy()
	o.PVC = o.PVC.DeepCopy()
	return o
}
