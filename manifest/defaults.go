package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/model"
)

// PodUID is the UID of a pod whose manifest sets none: the first 16 bytes of
// sha256(source/namespace/name) in UUID form. It depends only on the pod's
// identity, so editing the spec keeps the UID.
func PodUID(source, namespace, name string) types.UID {
	sum := sha256.Sum256([]byte(source + "/" + namespace + "/" + name))
	h := hex.EncodeToString(sum[:16])
	return types.UID(h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32])
}

// DerivedUID is the UID of a pod from a source reached over the network:
// derived from the source scope, the pod's key and the UID its manifest
// declares (so a new manifest UID is still a new incarnation), and never the
// manifest's own, so no client chooses a host path or takes another pod's.
// Without a manifest UID it equals PodUID.
func DerivedUID(source, namespace, name string, declared types.UID) types.UID {
	if declared == "" {
		return PodUID(source, namespace, name)
	}
	return PodUID(source, namespace, name+"/uid:"+string(declared))
}

// Default fills in, in place, what a manifest may leave out, as the
// Kubernetes API server would: kind and apiVersion, namespace "default", the
// UID (PodUID; with derive, DerivedUID replaces any manifest UID), restartPolicy Always, terminationGracePeriodSeconds 30,
// emptyDir for a volume without a type, hostPath type "", container
// imagePullPolicy (Always for a ":latest" or untagged image without digest,
// else IfNotPresent), port protocol TCP, hostPort = containerPort under
// hostNetwork, and probe and HTTP handler defaults. Status is cleared: a
// manifest declares desired state only. Default is idempotent.
func Default(source string, pod *v1.Pod, derive bool) {
	pod.APIVersion = "v1"
	pod.Kind = "Pod"
	pod.Status = v1.PodStatus{}
	if pod.Namespace == "" {
		pod.Namespace = v1.NamespaceDefault
	}
	switch {
	case pod.Name == "":
	case derive:
		pod.UID = DerivedUID(source, pod.Namespace, pod.Name, pod.UID)
	case pod.UID == "":
		pod.UID = PodUID(source, pod.Namespace, pod.Name)
	}
	spec := &pod.Spec
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = v1.RestartPolicyAlways
	}
	if spec.TerminationGracePeriodSeconds == nil {
		g := model.DefaultGracePeriodSeconds
		spec.TerminationGracePeriodSeconds = &g
	}
	for i := range spec.Volumes {
		defaultVolume(&spec.Volumes[i])
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i], spec.HostNetwork)
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i], spec.HostNetwork)
	}
}

func defaultVolume(v *v1.Volume) {
	if v.VolumeSource == (v1.VolumeSource{}) {
		v.EmptyDir = &v1.EmptyDirVolumeSource{}
	}
	if v.HostPath != nil && v.HostPath.Type == nil {
		t := v1.HostPathUnset
		v.HostPath.Type = &t
	}
}

func defaultContainer(c *v1.Container, hostNetwork bool) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = defaultPullPolicy(c.Image)
	}
	for i := range c.Ports {
		p := &c.Ports[i]
		if p.Protocol == "" {
			p.Protocol = v1.ProtocolTCP
		}
		if hostNetwork && p.HostPort == 0 {
			p.HostPort = p.ContainerPort
		}
	}
	for _, p := range []*v1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if p != nil {
			defaultProbe(p)
		}
	}
	if l := c.Lifecycle; l != nil {
		for _, h := range []*v1.LifecycleHandler{l.PostStart, l.PreStop} {
			if h != nil && h.HTTPGet != nil {
				defaultHTTPGet(h.HTTPGet)
			}
		}
	}
}

func defaultProbe(p *v1.Probe) {
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	if p.HTTPGet != nil {
		defaultHTTPGet(p.HTTPGet)
	}
}

func defaultHTTPGet(h *v1.HTTPGetAction) {
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = v1.URISchemeHTTP
	}
}

// defaultPullPolicy is Always for an image reference with tag "latest" or
// without tag and digest, else IfNotPresent.
func defaultPullPolicy(image string) v1.PullPolicy {
	if strings.Contains(image, "@") {
		return v1.PullIfNotPresent
	}
	last := image[strings.LastIndex(image, "/")+1:]
	i := strings.LastIndex(last, ":")
	if i < 0 || last[i+1:] == "latest" {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}
