package validation

import (
	"reflect"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// objectFields classes the fields of the objects accepted beside pods
// (ConfigMap, Secret, PersistentVolumeClaim) as podFields does for the pod
// spec; fields_test.go walks them by reflection too.
var objectFields = map[reflect.Type]map[string]fieldRule{
	reflect.TypeFor[v1.ConfigMap](): {
		"metadata":   m("name and namespace key the object; labels and annotations are kept"),
		"data":       m("string values: files, env, envFrom"),
		"binaryData": m("byte values: files only, as in the kubelet"),
		"immutable":  m("refuses every later change; delete and re-create to change it"),
	},
	reflect.TypeFor[v1.Secret](): {
		"metadata":   m("name and namespace key the object"),
		"data":       m("base64 values: files on a tmpfs, env, envFrom, never shown"),
		"stringData": m("merged into data at load, as the API server does"),
		"type":       m("Opaque, kubernetes.io/dockerconfigjson (imagePullSecrets), dockercfg, basic-auth, ssh-auth, tls; their required keys checked"),
		"immutable":  m("refuses every later change; delete and re-create to change it"),
	},
	reflect.TypeFor[v1.PersistentVolumeClaim](): {
		"metadata": m("name and namespace key the claim"),
		"spec":     m("what the claim asks for"),
		"status":   na("set by berth: Bound once its volume exists"),
	},
	reflect.TypeFor[v1.PersistentVolumeClaimSpec](): {
		"accessModes":               m("shown; ReadWriteOncePod admits one pod at a time (every other mode is met by the one node)"),
		"selector":                  na("no PersistentVolumes to select: the claim is a node-local engine volume"),
		"resources":                 m("the storage request, shown as the claim's capacity (not enforced by the local engine volume)"),
		"volumeName":                ref("claims bind to berth's own node-local volume, not to a named PersistentVolume"),
		"storageClassName":          na("one storage class: the engine's local volumes"),
		"volumeMode":                m("Filesystem; Block is refused"),
		"dataSource":                ref("no volume snapshots or clones on a node-local volume"),
		"dataSourceRef":             ref("no volume populators on a node-local volume"),
		"volumeAttributesClassName": na("no volume attributes classes"),
	},
	reflect.TypeFor[v1.VolumeResourceRequirements](): {
		"limits":   na("not enforced by the local engine volume"),
		"requests": m("storage: the claim's capacity as shown"),
	},
}

// objectRefusedFields returns a Forbidden error for every set field of obj
// (a pointer to one of objectFields' root types) classed refused.
func objectRefusedFields(obj any) field.ErrorList {
	var out []classedField
	walkFields(reflect.ValueOf(obj).Elem(), nil, &out)
	var errs field.ErrorList
	for _, f := range out {
		if f.rule.class == refused {
			errs = append(errs, notSupported(f.path, f.rule.what))
		}
	}
	return errs
}
