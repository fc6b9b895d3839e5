package validation

import (
	"encoding/json"
	"sort"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxObjectBytes bounds the data of one ConfigMap or Secret, as the API
// server's 1 MiB.
const MaxObjectBytes = 1 << 20

// ConfigMap checks a defaulted ConfigMap: its metadata, and its keys and
// size (never its values).
func ConfigMap(cm *v1.ConfigMap) field.ErrorList {
	errs := validateMeta(&cm.ObjectMeta)
	return append(errs, validateData(cm.Data, cm.BinaryData, field.NewPath("data"), field.NewPath("binaryData"))...)
}

// Secret checks a defaulted Secret whose stringData is already merged into
// data: its metadata, keys, size and the keys its type requires. Messages
// never carry its values.
func Secret(s *v1.Secret) field.ErrorList {
	errs := validateMeta(&s.ObjectMeta)
	errs = append(errs, validateData(nil, s.Data, nil, field.NewPath("data"))...)
	return append(errs, validateSecretType(s)...)
}

// Claim checks a defaulted PersistentVolumeClaim: its metadata, then what
// validateClaim checks.
func Claim(c *v1.PersistentVolumeClaim) field.ErrorList {
	errs := validateMeta(&c.ObjectMeta)
	return append(errs, validateClaim(c)...)
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
