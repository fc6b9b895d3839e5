package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
)

// containerManifest is the pod format of the 2014 kubelet (version v1beta1
// or v1beta2). It is recognised as a top-level sequence, or a mapping with
// "version" and neither "kind" nor "apiVersion", and converted to a v1 Pod
// in namespace "default": id becomes the name (without an id, a manifest
// that is a whole document of a file is named after the file, see
// LegacyPodName; elsewhere id is required), uuid the UID, command the container args
// (the seed passed it as Docker's Cmd), memory (bytes) limits.memory, cpu
// (milli-cores) limits.cpu, an http/tcp/exec liveness or readiness probe
// the matching v1 handler, imagePullPolicy PullAlways, PullNever and
// PullIfNotPresent Always, Never and IfNotPresent, capabilities the
// security context's. The fields of the late-2014 manifests (hostNetwork,
// dnsPolicy, lifecycle, terminationMessagePath) keep their names. Errors
// about the pod after conversion name v1 field paths.
type containerManifest struct {
	Version       string               `json:"version"`
	ID            string               `json:"id"`
	UUID          types.UID            `json:"uuid,omitempty"`
	Volumes       []legacyVolume       `json:"volumes,omitempty"`
	Containers    []legacyContainer    `json:"containers"`
	RestartPolicy *legacyRestartPolicy `json:"restartPolicy,omitempty"`
	DNSPolicy     v1.DNSPolicy         `json:"dnsPolicy,omitempty"`
	HostNetwork   bool                 `json:"hostNetwork,omitempty"`
}

type legacyVolume struct {
	Name   string `json:"name"`
	Source *struct {
		HostDir *struct {
			Path string `json:"path"`
		} `json:"hostDir,omitempty"`
		EmptyDir *struct{} `json:"emptyDir,omitempty"`
	} `json:"source,omitempty"`
}

type legacyContainer struct {
	Name          string        `json:"name"`
	Image         string        `json:"image"`
	Command       []string      `json:"command,omitempty"`
	WorkingDir    string        `json:"workingDir,omitempty"`
	Ports         []legacyPort  `json:"ports,omitempty"`
	Env           []legacyEnv   `json:"env,omitempty"`
	Memory        int64         `json:"memory,omitempty"`
	CPU           int64         `json:"cpu,omitempty"`
	VolumeMounts  []legacyMount `json:"volumeMounts,omitempty"`
	LivenessProbe *legacyProbe  `json:"livenessProbe,omitempty"`
	Privileged    bool          `json:"privileged,omitempty"`

	ReadinessProbe         *legacyProbe     `json:"readinessProbe,omitempty"`
	Lifecycle              *legacyLifecycle `json:"lifecycle,omitempty"`
	TerminationMessagePath string           `json:"terminationMessagePath,omitempty"`
	ImagePullPolicy        string           `json:"imagePullPolicy,omitempty"`
	Capabilities           *v1.Capabilities `json:"capabilities,omitempty"`
}

type legacyLifecycle struct {
	PostStart *legacyHandler `json:"postStart,omitempty"`
	PreStop   *legacyHandler `json:"preStop,omitempty"`
}

type legacyHandler struct {
	Exec *struct {
		Command []string `json:"command,omitempty"`
	} `json:"exec,omitempty"`
	HTTPGet *struct {
		Path string             `json:"path,omitempty"`
		Port intstr.IntOrString `json:"port,omitempty"`
		Host string             `json:"host,omitempty"`
	} `json:"httpGet,omitempty"`
}

// legacyPullPolicies are the 2014 names of the image pull policies.
var legacyPullPolicies = map[string]v1.PullPolicy{
	"PullAlways":       v1.PullAlways,
	"PullNever":        v1.PullNever,
	"PullIfNotPresent": v1.PullIfNotPresent,
}

type legacyPort struct {
	Name          string `json:"name,omitempty"`
	HostPort      int32  `json:"hostPort,omitempty"`
	ContainerPort int32  `json:"containerPort"`
	Protocol      string `json:"protocol,omitempty"`
	HostIP        string `json:"hostIP,omitempty"`
}

// legacyEnv accepts "key", the name field of the earliest manifests.
type legacyEnv struct {
	Name  string `json:"name,omitempty"`
	Key   string `json:"key,omitempty"`
	Value string `json:"value,omitempty"`
}

// legacyMount accepts "path", the mountPath field of the earliest manifests.
type legacyMount struct {
	Name      string `json:"name"`
	MountPath string `json:"mountPath,omitempty"`
	Path      string `json:"path,omitempty"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
}

type legacyProbe struct {
	Enabled *bool  `json:"enabled,omitempty"`
	Type    string `json:"type,omitempty"`
	HTTPGet *struct {
		Path string             `json:"path,omitempty"`
		Port intstr.IntOrString `json:"port,omitempty"`
		Host string             `json:"host,omitempty"`
	} `json:"httpGet,omitempty"`
	TCPSocket *struct {
		Port intstr.IntOrString `json:"port,omitempty"`
	} `json:"tcpSocket,omitempty"`
	Exec *struct {
		Command []string `json:"command,omitempty"`
	} `json:"exec,omitempty"`
	InitialDelaySeconds int32 `json:"initialDelaySeconds,omitempty"`
	TimeoutSeconds      int32 `json:"timeoutSeconds,omitempty"`
}

type legacyRestartPolicy struct {
	Always    *struct{} `json:"always,omitempty"`
	OnFailure *struct{} `json:"onFailure,omitempty"`
	Never     *struct{} `json:"never,omitempty"`
}

func (d *decoder) legacyList(j []byte) {
	var items []json.RawMessage
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(j, &items); err != nil {
		d.fail("", "", jsonMessage(err))
		return
	}
	for i, item := range items {
		if !d.take() {
			return
		}
		prefix := fmt.Sprintf("[%d]", i)
		item = bytes.TrimSpace(item)
		if len(item) == 0 || item[0] != '{' {
			d.fail("", prefix, "list item must be a ContainerManifest object")
			continue
		}
		d.legacy(item, prefix)
	}
}

// legacyVersions are the ContainerManifest versions berth reads; v1beta2
// has the same manifest fields as v1beta1.
var legacyVersions = []string{"v1beta1", "v1beta2"}

func (d *decoder) legacy(j []byte, prefix string) {
	var head struct {
		ID string `json:"id"`
	}
	_ = sigsjson.UnmarshalCaseSensitivePreserveInts(j, &head)
	name := head.ID
	if name == "" && prefix == "" && d.opts.FileOrigin {
		name = LegacyPodName(d.origin)
	}
	key := ""
	if name != "" {
		key = PodKey("", name)
	}
	if !d.bounded(j, "", key, prefix) {
		return
	}
	var m containerManifest
	reported, ok := d.unmarshalStrict(j, &m, key, prefix)
	if !ok {
		return
	}
	if !slices.Contains(legacyVersions, m.Version) {
		d.failField(key, prefix, field.NotSupported(field.NewPath("version"), m.Version, legacyVersions))
		return
	}
	if m.ID == "" {
		m.ID = name
	}
	pod, errs := m.toPod()
	for _, e := range errs {
		d.failField(key, prefix, e)
		reported = append(reported, e.Field)
	}
	for _, p := range reported {
		if strings.HasPrefix(p, "containers") || strings.HasPrefix(p, "volumes") {
			reported = append(reported, "spec."+p)
		}
	}
	d.accept(pod, prefix, reported, legacyPath)
}

// legacyPath names the manifest's own fields for the v1 paths of its
// metadata: id and uuid.
func legacyPath(p string) string {
	switch p {
	case "metadata.name":
		return "id"
	case "metadata.uid":
		return "uuid"
	}
	return p
}

// toPod converts the manifest; errors name manifest field paths.
func (m *containerManifest) toPod() (*v1.Pod, field.ErrorList) {
	var errs field.ErrorList
	pod := &v1.Pod{}
	pod.Name = m.ID
	pod.Namespace = v1.NamespaceDefault
	pod.UID = m.UUID
	pod.Spec.DNSPolicy = m.DNSPolicy
	pod.Spec.HostNetwork = m.HostNetwork
	if rp := m.RestartPolicy; rp != nil {
		var set []v1.RestartPolicy
		if rp.Always != nil {
			set = append(set, v1.RestartPolicyAlways)
		}
		if rp.OnFailure != nil {
			set = append(set, v1.RestartPolicyOnFailure)
		}
		if rp.Never != nil {
			set = append(set, v1.RestartPolicyNever)
		}
		switch len(set) {
		case 0:
		case 1:
			pod.Spec.RestartPolicy = set[0]
		default:
			errs = append(errs, field.Forbidden(field.NewPath("restartPolicy"), "may not specify more than one policy"))
		}
	}
	for i, v := range m.Volumes {
		vol := v1.Volume{Name: v.Name}
		switch {
		case v.Source == nil || (v.Source.HostDir == nil && v.Source.EmptyDir == nil):
			vol.EmptyDir = &v1.EmptyDirVolumeSource{}
		case v.Source.HostDir != nil && v.Source.EmptyDir != nil:
			errs = append(errs, field.Forbidden(field.NewPath("volumes").Index(i).Child("source"), "may not specify more than one volume type"))
		case v.Source.HostDir != nil:
			vol.HostPath = &v1.HostPathVolumeSource{Path: v.Source.HostDir.Path}
		default:
			vol.EmptyDir = &v1.EmptyDirVolumeSource{}
		}
		pod.Spec.Volumes = append(pod.Spec.Volumes, vol)
	}
	for i := range m.Containers {
		c, cerrs := m.Containers[i].toContainer(field.NewPath("containers").Index(i))
		errs = append(errs, cerrs...)
		pod.Spec.Containers = append(pod.Spec.Containers, c)
	}
	return pod, errs
}

func (lc *legacyContainer) toContainer(path *field.Path) (v1.Container, field.ErrorList) {
	var errs field.ErrorList
	c := v1.Container{
		Name:                   lc.Name,
		Image:                  lc.Image,
		Args:                   lc.Command,
		WorkingDir:             lc.WorkingDir,
		TerminationMessagePath: lc.TerminationMessagePath,
		ImagePullPolicy:        v1.PullPolicy(lc.ImagePullPolicy),
	}
	if p, ok := legacyPullPolicies[lc.ImagePullPolicy]; ok {
		c.ImagePullPolicy = p
	}
	for _, p := range lc.Ports {
		c.Ports = append(c.Ports, v1.ContainerPort{
			Name:          p.Name,
			HostPort:      p.HostPort,
			ContainerPort: p.ContainerPort,
			Protocol:      v1.Protocol(strings.ToUpper(p.Protocol)),
			HostIP:        p.HostIP,
		})
	}
	for i, e := range lc.Env {
		name := e.Name
		if name == "" {
			name = e.Key
		} else if e.Key != "" && e.Key != e.Name {
			errs = append(errs, field.Invalid(path.Child("env").Index(i).Child("key"), e.Key, "must match name when both are set"))
		}
		c.Env = append(c.Env, v1.EnvVar{Name: name, Value: e.Value})
	}
	if lc.Memory != 0 || lc.CPU != 0 {
		c.Resources.Limits = v1.ResourceList{}
		if lc.Memory != 0 {
			c.Resources.Limits[v1.ResourceMemory] = *resource.NewQuantity(lc.Memory, resource.BinarySI)
		}
		if lc.CPU != 0 {
			c.Resources.Limits[v1.ResourceCPU] = *resource.NewMilliQuantity(lc.CPU, resource.DecimalSI)
		}
	}
	for i, vm := range lc.VolumeMounts {
		mp := vm.MountPath
		if mp == "" {
			mp = vm.Path
		} else if vm.Path != "" && vm.Path != vm.MountPath {
			errs = append(errs, field.Invalid(path.Child("volumeMounts").Index(i).Child("path"), vm.Path, "must match mountPath when both are set"))
		}
		c.VolumeMounts = append(c.VolumeMounts, v1.VolumeMount{Name: vm.Name, MountPath: mp, ReadOnly: vm.ReadOnly})
	}
	if lc.Privileged || lc.Capabilities != nil {
		c.SecurityContext = &v1.SecurityContext{Capabilities: lc.Capabilities}
		if lc.Privileged {
			c.SecurityContext.Privileged = &lc.Privileged
		}
	}
	if lp := lc.LivenessProbe; lp != nil && (lp.Enabled == nil || *lp.Enabled) {
		probe, perrs := lp.toProbe(path.Child("livenessProbe"))
		errs = append(errs, perrs...)
		c.LivenessProbe = probe
	}
	if lp := lc.ReadinessProbe; lp != nil && (lp.Enabled == nil || *lp.Enabled) {
		probe, perrs := lp.toProbe(path.Child("readinessProbe"))
		errs = append(errs, perrs...)
		c.ReadinessProbe = probe
	}
	if l := lc.Lifecycle; l != nil {
		c.Lifecycle = &v1.Lifecycle{PostStart: l.PostStart.toHandler(), PreStop: l.PreStop.toHandler()}
	}
	return c, errs
}

// toHandler converts a hook; Validate checks it has one action.
func (h *legacyHandler) toHandler() *v1.LifecycleHandler {
	if h == nil {
		return nil
	}
	out := &v1.LifecycleHandler{}
	if h.Exec != nil {
		out.Exec = &v1.ExecAction{Command: h.Exec.Command}
	}
	if h.HTTPGet != nil {
		out.HTTPGet = &v1.HTTPGetAction{Path: h.HTTPGet.Path, Port: numericPort(h.HTTPGet.Port), Host: h.HTTPGet.Host}
	}
	return out
}

func (lp *legacyProbe) toProbe(path *field.Path) (*v1.Probe, field.ErrorList) {
	p := &v1.Probe{InitialDelaySeconds: lp.InitialDelaySeconds, TimeoutSeconds: lp.TimeoutSeconds}
	typ := strings.ToLower(lp.Type)
	if typ == "" {
		switch {
		case lp.HTTPGet != nil:
			typ = "http"
		case lp.TCPSocket != nil:
			typ = "tcp"
		case lp.Exec != nil:
			typ = "exec"
		}
	}
	switch {
	case typ == "http" && lp.HTTPGet != nil:
		p.HTTPGet = &v1.HTTPGetAction{Path: lp.HTTPGet.Path, Port: numericPort(lp.HTTPGet.Port), Host: lp.HTTPGet.Host}
	case typ == "tcp" && lp.TCPSocket != nil:
		p.TCPSocket = &v1.TCPSocketAction{Port: numericPort(lp.TCPSocket.Port)}
	case typ == "exec" && lp.Exec != nil:
		p.Exec = &v1.ExecAction{Command: lp.Exec.Command}
	case typ == "http" || typ == "tcp" || typ == "exec":
		name := map[string]string{"http": "httpGet", "tcp": "tcpSocket", "exec": "exec"}[typ]
		return nil, field.ErrorList{field.Required(path.Child(name), "required for type "+lp.Type)}
	default:
		return nil, field.ErrorList{field.NotSupported(path.Child("type"), lp.Type, []string{"http", "tcp", "exec"})}
	}
	return p, nil
}

// numericPort turns the string ports of early manifests ("8080") into
// numbers; other strings stay port names.
func numericPort(p intstr.IntOrString) intstr.IntOrString {
	if p.Type == intstr.String {
		if n, err := strconv.ParseInt(p.StrVal, 10, 32); err == nil {
			return intstr.FromInt32(int32(n))
		}
	}
	return p
}
