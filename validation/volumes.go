package validation

import (
	"path"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// projectionVolumes are the volume types whose files berth writes from
// ConfigMaps, Secrets and the pod itself.
var projectionVolumes = []string{"configMap", "secret", "projected", "downwardAPI"}

// downwardVolumeFields are the fieldRef paths a downwardAPI volume file may
// name, beside metadata.labels['k'] and metadata.annotations['k'].
var downwardVolumeFields = []string{"metadata.name", "metadata.namespace", "metadata.uid", "metadata.labels", "metadata.annotations"}

// validateProjection checks a configMap, secret, projected or downwardAPI
// volume as the API server does: names given, item paths relative without
// '..', modes within 0-0777, no path projected twice.
func validateProjection(vol *v1.Volume, p *field.Path, containers map[string]bool) field.ErrorList {
	var errs field.ErrorList
	paths := map[string]string{}
	item := func(ip *field.Path, file string) {
		errs = append(errs, validateItemPath(file, ip.Child("path"))...)
		if prev, dup := paths[path.Clean(file)]; dup && file != "" {
			errs = append(errs, field.Invalid(ip.Child("path"), file, "conflicts with "+prev))
		}
		paths[path.Clean(file)] = ip.String()
	}
	keys := func(ip *field.Path, items []v1.KeyToPath) {
		for i, it := range items {
			kp := ip.Index(i)
			if it.Key == "" {
				errs = append(errs, field.Required(kp.Child("key"), ""))
			}
			item(kp, it.Path)
			errs = append(errs, validateMode(it.Mode, kp.Child("mode"))...)
		}
	}
	downward := func(dp *field.Path, items []v1.DownwardAPIVolumeFile) {
		for i, f := range items {
			fp := dp.Index(i)
			item(fp, f.Path)
			errs = append(errs, validateMode(f.Mode, fp.Child("mode"))...)
			switch {
			case f.FieldRef != nil && f.ResourceFieldRef != nil:
				errs = append(errs, field.Invalid(fp, "", "fieldRef and resourceFieldRef can not be specified simultaneously"))
			case f.FieldRef != nil:
				rp := fp.Child("fieldRef", "fieldPath")
				fpath := f.FieldRef.FieldPath
				if _, _, ok := metadataSubscript(fpath); !ok && !slices.Contains(downwardVolumeFields, fpath) {
					if fpath == "" {
						errs = append(errs, field.Required(rp, ""))
					} else {
						errs = append(errs, field.NotSupported(rp, fpath, downwardVolumeFields))
					}
				}
			case f.ResourceFieldRef != nil:
				rf, rp := f.ResourceFieldRef, fp.Child("resourceFieldRef")
				switch {
				case rf.ContainerName == "":
					errs = append(errs, field.Required(rp.Child("containerName"), ""))
				case !containers[rf.ContainerName]:
					errs = append(errs, field.NotFound(rp.Child("containerName"), rf.ContainerName))
				}
				if !slices.Contains(downwardResources, rf.Resource) {
					errs = append(errs, field.NotSupported(rp.Child("resource"), rf.Resource, downwardResources))
				}
				if rf.Divisor.Sign() < 0 {
					errs = append(errs, field.Invalid(rp.Child("divisor"), rf.Divisor.String(), "must be greater than 0"))
				}
			default:
				errs = append(errs, field.Required(fp, "one of fieldRef and resourceFieldRef is required"))
			}
		}
	}
	switch {
	case vol.ConfigMap != nil:
		cp := p.Child("configMap")
		if vol.ConfigMap.Name == "" {
			errs = append(errs, field.Required(cp.Child("name"), ""))
		}
		errs = append(errs, validateObjectName(vol.ConfigMap.Name, cp.Child("name"))...)
		errs = append(errs, validateMode(vol.ConfigMap.DefaultMode, cp.Child("defaultMode"))...)
		keys(cp.Child("items"), vol.ConfigMap.Items)
	case vol.Secret != nil:
		sp := p.Child("secret")
		if vol.Secret.SecretName == "" {
			errs = append(errs, field.Required(sp.Child("secretName"), ""))
		}
		errs = append(errs, validateObjectName(vol.Secret.SecretName, sp.Child("secretName"))...)
		errs = append(errs, validateMode(vol.Secret.DefaultMode, sp.Child("defaultMode"))...)
		keys(sp.Child("items"), vol.Secret.Items)
	case vol.DownwardAPI != nil:
		dp := p.Child("downwardAPI")
		errs = append(errs, validateMode(vol.DownwardAPI.DefaultMode, dp.Child("defaultMode"))...)
		downward(dp.Child("items"), vol.DownwardAPI.Items)
	case vol.Projected != nil:
		pp := p.Child("projected")
		errs = append(errs, validateMode(vol.Projected.DefaultMode, pp.Child("defaultMode"))...)
		for i, src := range vol.Projected.Sources {
			sp := pp.Child("sources").Index(i)
			n := 0
			for _, set := range []bool{src.ConfigMap != nil, src.Secret != nil, src.DownwardAPI != nil, src.ServiceAccountToken != nil,
				src.ClusterTrustBundle != nil, src.PodCertificate != nil} {
				if set {
					n++
				}
			}
			if n != 1 {
				errs = append(errs, field.Forbidden(sp, "must specify exactly one of configMap, secret, downwardAPI"))
				continue
			}
			switch {
			case src.ConfigMap != nil:
				if src.ConfigMap.Name == "" {
					errs = append(errs, field.Required(sp.Child("configMap", "name"), ""))
				}
				errs = append(errs, validateObjectName(src.ConfigMap.Name, sp.Child("configMap", "name"))...)
				keys(sp.Child("configMap", "items"), src.ConfigMap.Items)
			case src.Secret != nil:
				if src.Secret.Name == "" {
					errs = append(errs, field.Required(sp.Child("secret", "name"), ""))
				}
				errs = append(errs, validateObjectName(src.Secret.Name, sp.Child("secret", "name"))...)
				keys(sp.Child("secret", "items"), src.Secret.Items)
			case src.DownwardAPI != nil:
				downward(sp.Child("downwardAPI", "items"), src.DownwardAPI.Items)
			}
		}
	}
	return errs
}

// metadataSubscript splits metadata.labels['k'] or metadata.annotations['k'].
func metadataSubscript(fp string) (what, key string, ok bool) {
	for _, w := range []string{"metadata.labels", "metadata.annotations"} {
		if rest, found := strings.CutPrefix(fp, w+"['"); found && strings.HasSuffix(rest, "']") {
			return w, strings.TrimSuffix(rest, "']"), true
		}
	}
	return "", "", false
}

// validateItemPath checks a file path inside a projected volume: it becomes
// a path under the volume's directory, so it must stay local to it.
func validateItemPath(file string, p *field.Path) field.ErrorList {
	switch {
	case file == "":
		return field.ErrorList{field.Required(p, "")}
	case path.IsAbs(file):
		return field.ErrorList{field.Invalid(p, file, "must be a relative path")}
	case len(file) > 4096:
		return field.ErrorList{field.TooLong(p, "", 4096)}
	case strings.HasPrefix(file, ".."):
		return field.ErrorList{field.Invalid(p, file, "must not start with '..'")}
	case strings.ContainsRune(file, 0):
		return field.ErrorList{field.Invalid(p, file, "must not contain NUL")}
	}
	for _, el := range strings.Split(file, "/") {
		if el == ".." {
			return field.ErrorList{field.Invalid(p, file, "must not contain '..'")}
		}
	}
	return nil
}

func validateMode(mode *int32, p *field.Path) field.ErrorList {
	if mode != nil && (*mode < 0 || *mode > 0o777) {
		return field.ErrorList{field.Invalid(p, *mode, "must be a number between 0 and 0777 (octal), both inclusive")}
	}
	return nil
}

// validateObjectName checks a referenced ConfigMap or Secret name (empty
// is reported by the caller).
func validateObjectName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// validateKeyRef checks a configMapKeyRef or secretKeyRef.
func validateKeyRef(name, key string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	errs = append(errs, validateObjectName(name, p.Child("name"))...)
	if key == "" {
		errs = append(errs, field.Required(p.Child("key"), ""))
	}
	for _, msg := range validation.IsConfigMapKey(key) {
		if key != "" {
			errs = append(errs, field.Invalid(p.Child("key"), key, msg))
		}
	}
	return errs
}

// validateEnvFrom checks a container's envFrom: exactly one source each,
// a name, and a prefix that starts a valid variable name.
func validateEnvFrom(c *v1.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, e := range c.EnvFrom {
		ep := p.Child("envFrom").Index(i)
		switch {
		case (e.ConfigMapRef == nil) == (e.SecretRef == nil):
			errs = append(errs, field.Invalid(ep, "", "must specify exactly one of: `configMapRef` or `secretRef`"))
		case e.ConfigMapRef != nil:
			if e.ConfigMapRef.Name == "" {
				errs = append(errs, field.Required(ep.Child("configMapRef", "name"), ""))
			}
			errs = append(errs, validateObjectName(e.ConfigMapRef.Name, ep.Child("configMapRef", "name"))...)
		default:
			if e.SecretRef.Name == "" {
				errs = append(errs, field.Required(ep.Child("secretRef", "name"), ""))
			}
			errs = append(errs, validateObjectName(e.SecretRef.Name, ep.Child("secretRef", "name"))...)
		}
		if e.Prefix != "" && strings.ContainsAny(e.Prefix, "=\x00") {
			errs = append(errs, field.Invalid(ep.Child("prefix"), e.Prefix, "must not contain '=' or NUL"))
		}
	}
	return errs
}
