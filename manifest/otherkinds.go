package manifest

import (
	"fmt"
	"strings"
)

// builtinKinds are the kinds of the Kubernetes API, other than those berth
// serves, that application files carry beside their pods.
var builtinKinds = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`
		Service Endpoints Namespace Node PersistentVolume ReplicationController
		ServiceAccount LimitRange ResourceQuota Event PodTemplate Binding
		Deployment StatefulSet DaemonSet ReplicaSet ControllerRevision Job CronJob
		Ingress IngressClass NetworkPolicy EndpointSlice IPAddress ServiceCIDR
		Role RoleBinding ClusterRole ClusterRoleBinding
		PodDisruptionBudget PodSecurityPolicy HorizontalPodAutoscaler
		StorageClass CSIDriver CSINode VolumeAttachment CSIStorageCapacity VolumeAttributesClass
		PriorityClass RuntimeClass Lease CustomResourceDefinition APIService
		ValidatingWebhookConfiguration MutatingWebhookConfiguration
		ValidatingAdmissionPolicy ValidatingAdmissionPolicyBinding
		MutatingAdmissionPolicy MutatingAdmissionPolicyBinding
		CertificateSigningRequest ClusterTrustBundle FlowSchema PriorityLevelConfiguration
		ResourceClaim ResourceClaimTemplate DeviceClass ResourceSlice`) {
		builtinKinds[k] = true
	}
}

// notServed reports whether a document of kind and apiVersion is an object
// berth does not serve, to skip with a warning: a built-in kind of the
// Kubernetes API, or any kind of a named API group (a custom resource). An
// unknown kind of the core API is not: most likely a misspelt Pod.
func notServed(kind, apiVersion string) bool {
	return builtinKinds[kind] || strings.Contains(apiVersion, "/")
}

// skip records the warning of a document (or list item at prefix) that
// declares an object berth does not serve.
func (d *decoder) skip(prefix, kind, apiVersion string) {
	what := "kind " + kind
	if apiVersion != "v1" {
		what += " (" + apiVersion + ")"
	}
	if prefix != "" {
		what = prefix + ": " + what
	}
	d.warnings = append(d.warnings, fmt.Sprintf("%s: %s is not served by berth; skipped%s", d.origin, what, d.doc))
}
