package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"

	"github.com/berth-dev/berth/model"
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

// MaxObjectBytes bounds the data of one ConfigMap or Secret, as the API
// server's 1 MiB.
const MaxObjectBytes = 1 << 20

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
		ed.add(validateMeta(&cm.ObjectMeta)...)
		ed.add(validateData(cm.Data, cm.BinaryData, field.NewPath("data"), field.NewPath("binaryData"))...)
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
			for _, k := range sortedKeys(s.StringData) {
				for _, msg := range validation.IsConfigMapKey(k) {
					ed.add(field.Invalid(field.NewPath("stringData").Key(k), k, msg))
				}
			}
			s.StringData = nil
		}
		ed.add(validateMeta(&s.ObjectMeta)...)
		ed.add(validateData(nil, s.Data, nil, field.NewPath("data"))...)
		ed.add(validateSecretType(s)...)
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
		ed.add(validateMeta(&c.ObjectMeta)...)
		ed.add(validateClaim(c)...)
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

// validateMeta checks an object's name (a DNS-1123 subdomain) and
// namespace (a DNS-1123 label), both required.
func validateMeta(m *metav1.ObjectMeta) field.ErrorList {
	var errs field.ErrorList
	mp := field.NewPath("metadata")
	if m.Name == "" {
		errs = append(errs, field.Required(mp.Child("name"), ""))
	}
	for _, msg := range validation.IsDNS1123Subdomain(m.Name) {
		if m.Name != "" {
			errs = append(errs, field.Invalid(mp.Child("name"), m.Name, msg))
		}
	}
	if m.Namespace == "" {
		errs = append(errs, field.Required(mp.Child("namespace"), ""))
	}
	for _, msg := range validation.IsDNS1123Label(m.Namespace) {
		if m.Namespace != "" {
			errs = append(errs, field.Invalid(mp.Child("namespace"), m.Namespace, msg))
		}
	}
	return errs
}

// validateData checks the keys of data and binary (dp, bp their paths; a
// nil path for a map that is not there): config keys, not in both, and at
// most MaxObjectBytes together. It names keys, never values.
func validateData(data map[string]string, binary map[string][]byte, dp, bp *field.Path) field.ErrorList {
	var errs field.ErrorList
	size := 0
	for _, k := range sortedKeys(data) {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(dp.Key(k), k, msg))
		}
		size += len(data[k])
	}
	for _, k := range sortedKeys(binary) {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(bp.Key(k), k, msg))
		}
		if _, dup := data[k]; dup {
			errs = append(errs, field.Invalid(bp.Key(k), k, "duplicate of key present in data"))
		}
		size += len(binary[k])
	}
	if size > MaxObjectBytes {
		p := bp
		if p == nil {
			p = dp
		}
		errs = append(errs, field.TooLong(p, "", MaxObjectBytes))
	}
	return errs
}

// validateSecretType checks the keys its type requires, as the API server.
func validateSecretType(s *v1.Secret) field.ErrorList {
	dp := field.NewPath("data")
	need := func(keys ...string) field.ErrorList {
		var errs field.ErrorList
		for _, k := range keys {
			if _, ok := s.Data[k]; !ok {
				errs = append(errs, field.Required(dp.Key(k), ""))
			}
		}
		return errs
	}
	switch s.Type {
	case v1.SecretTypeServiceAccountToken:
		return field.ErrorList{notSupported(field.NewPath("type"), "service account tokens are issued by an API server")}
	case v1.SecretTypeDockerConfigJson:
		errs := need(v1.DockerConfigJsonKey)
		if v, ok := s.Data[v1.DockerConfigJsonKey]; ok && !json.Valid(v) {
			errs = append(errs, field.Invalid(dp.Key(v1.DockerConfigJsonKey), "<secret contents redacted>", "must be valid JSON"))
		}
		return errs
	case v1.SecretTypeDockercfg:
		errs := need(v1.DockerConfigKey)
		if v, ok := s.Data[v1.DockerConfigKey]; ok && !json.Valid(v) {
			errs = append(errs, field.Invalid(dp.Key(v1.DockerConfigKey), "<secret contents redacted>", "must be valid JSON"))
		}
		return errs
	case v1.SecretTypeBasicAuth:
		if len(s.Data[v1.BasicAuthUsernameKey]) == 0 && len(s.Data[v1.BasicAuthPasswordKey]) == 0 {
			return field.ErrorList{field.Required(dp, "must contain at least one of username or password")}
		}
	case v1.SecretTypeSSHAuth:
		return need(v1.SSHAuthPrivateKey)
	case v1.SecretTypeTLS:
		return need(v1.TLSCertKey, v1.TLSPrivateKeyKey)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// DeepCopy returns o with its own copy of the object.
func (o Object) DeepCopy() Object {
	o.ConfigMap = o.ConfigMap.DeepCopy()
	o.Secret = o.Secret.DeepCopy()
	o.PVC = o.PVC.DeepCopy()
	return o
}
