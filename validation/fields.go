package validation

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/berth-dev/berth/internal/jsonfield"
)

// fieldClass is what berth does with a pod-spec field that a manifest sets.
type fieldClass int

const (
	// mapped: berth gives the field its Kubernetes meaning (Pod may
	// still refuse some values).
	mapped fieldClass = iota + 1
	// defaulted: berth supplies the value itself.
	defaulted
	// notApplicable: meaningless without a cluster; accepted, and named in
	// the pod's one warning line at load.
	notApplicable
	// refused: Pod rejects the pod naming the field.
	refused
	// notEnforced: a kubelet would act on it and berth does not; accepted,
	// and named in the pod's one warning line at load as not enforced.
	notEnforced
)

// fieldRule is the class of one field and what it becomes, or why it is not
// applicable or refused.
type fieldRule struct {
	class fieldClass
	what  string
}

func m(what string) fieldRule  { return fieldRule{mapped, what} }
func na(why string) fieldRule  { return fieldRule{notApplicable, why} }
func ref(why string) fieldRule { return fieldRule{refused, why} }
func ne(why string) fieldRule  { return fieldRule{notEnforced, why} }

// podFields classes every field of the core/v1 structs reachable from
// PodSpec through mapped and defaulted fields, keyed by the Go type that
// declares the field and its JSON name; inlined structs (VolumeSource,
// ProbeHandler) have their own entries. The subtree of a notApplicable or
// refused field is not classed further: the field stands for all of it (so
// EphemeralContainer, Affinity and the refused volume sources have no
// entries). fields_test.go walks k8s.io/api by reflection and fails on a
// field missing here or an entry naming no field.
var podFields = map[reflect.Type]map[string]fieldRule{
	reflect.TypeFor[v1.PodSpec](): {
		"volumes":                       m("hostPath, emptyDir, configMap, secret, projected, downwardAPI and persistentVolumeClaim volumes"),
		"initContainers":                m("run to completion in order before the app containers"),
		"containers":                    m("Docker containers joined to the pod's sandbox"),
		"ephemeralContainers":           ref("ephemeral containers need the API server's ephemeralcontainers subresource"),
		"restartPolicy":                 m("restart of exited containers"),
		"terminationGracePeriodSeconds": m("stop timeout, raised to at least 2 s"),
		"activeDeadlineSeconds":         m("then the containers are killed and the pod is Failed (DeadlineExceeded)"),
		"dnsPolicy":                     m("ClusterFirst* behave as Default (no cluster DNS); None uses only dnsConfig"),
		"nodeSelector":                  m("admission: refused (NodeAffinity) unless the node's labels (node_labels) match"),
		"serviceAccountName":            na("no service accounts (still readable through the downward API)"),
		"serviceAccount":                na("no service accounts"),
		"automountServiceAccountToken":  na("no service account tokens"),
		"nodeName":                      m("another node's name draws a warning; berth runs the pod and reports its own node name"),
		"hostNetwork":                   m("the host's network namespace (allow_host_access)"),
		"hostPID":                       m("the host's PID namespace (allow_host_access)"),
		"hostIPC":                       m("the host's IPC namespace (allow_host_access)"),
		"shareProcessNamespace":         m("containers share the sandbox's PID namespace"),
		"securityContext":               m("defaults of every container's security context, groups, sysctls"),
		"imagePullSecrets":              m("kubernetes.io/dockerconfigjson or dockercfg Secrets of the pod's source, beside docker.config"),
		"hostname":                      m("the sandbox's hostname"),
		"subdomain":                     m("the FQDN in /etc/hosts"),
		"affinity":                      m("required node affinity is checked at admission"),
		"schedulerName":                 na("no scheduler"),
		"tolerations":                   na("no taints"),
		"hostAliases":                   m("lines in /etc/hosts"),
		"priorityClassName":             m("system-node-critical sets the OOM score adjustment"),
		"priority":                      na("no scheduler or preemption"),
		"dnsConfig":                     m("the sandbox's resolv.conf"),
		"readinessGates":                ref("readiness gates are set by controllers through the API server"),
		"runtimeClassName":              ref("berth has one runtime, the Docker daemon's default"),
		"enableServiceLinks":            na("no Services"),
		"preemptionPolicy":              na("no scheduler or preemption"),
		"overhead":                      m("added to the pod's requests at admission"),
		"topologySpreadConstraints":     na("no scheduler"),
		"setHostnameAsFQDN":             m("the FQDN becomes the hostname"),
		"os":                            m("linux only"),
		"hostUsers":                     m("true runs in the host's user namespace; false is refused"),
		"schedulingGates":               ref("a gated pod waits for a scheduler, which berth does not have"),
		"resourceClaims":                ref("dynamic resource allocation needs the API server"),
		"resources":                     m("cpu and memory: requests count at admission; limits cap each container without its own (no pod cgroup)"),
		"hostnameOverride":              ref("hostname overrides are not implemented; use hostname"),
		"schedulingGroup":               na("no scheduler"),
		"evictionResponders":            na("no eviction API"),
	},
	reflect.TypeFor[v1.Container](): {
		"name":                     m("the container's name"),
		"image":                    m("the Docker image"),
		"command":                  m("the entrypoint, $(VAR) expanded"),
		"args":                     m("the command, $(VAR) expanded"),
		"workingDir":               m("the working directory"),
		"ports":                    m("published on the sandbox"),
		"envFrom":                  m("every key of a ConfigMap or Secret of the pod's source, with a prefix"),
		"env":                      m("environment, $(VAR) expanded, with the downward API"),
		"resources":                m("CPU shares and quota, memory limit"),
		"resizePolicy":             na("no in-place resize API"),
		"restartPolicy":            m("Always on an init container makes it a sidecar: started in order, kept running, stopped after the app containers"),
		"restartPolicyRules":       ref("container restart rules are not implemented"),
		"volumeMounts":             m("binds of the pod's volumes"),
		"volumeDevices":            ref("raw block devices need PersistentVolumeClaims"),
		"livenessProbe":            m("probed by berth; failure restarts the container"),
		"readinessProbe":           m("probed by berth; the Ready condition"),
		"startupProbe":             m("probed by berth before liveness and readiness"),
		"lifecycle":                m("postStart and preStop hooks, stop signal"),
		"terminationMessagePath":   m("a host file bound there"),
		"terminationMessagePolicy": m("File or FallbackToLogsOnError"),
		"imagePullPolicy":          m("when berth pulls the image"),
		"securityContext":          m("Docker user, capabilities, privileges, profiles"),
		"stdin":                    m("Docker OpenStdin"),
		"stdinOnce":                m("Docker StdinOnce"),
		"tty":                      m("Docker Tty"),
	},
	reflect.TypeFor[v1.ContainerPort](): {
		"name":          m("the port's name for probes and hooks"),
		"hostPort":      m("published on the host"),
		"containerPort": m("the container's port"),
		"protocol":      m("TCP, UDP or SCTP"),
		"hostIP":        m("the host address to publish on"),
	},
	reflect.TypeFor[v1.EnvVar](): {
		"name":      m("the variable's name"),
		"value":     m("the value, $(VAR) expanded"),
		"valueFrom": m("the downward API, a key of a ConfigMap or Secret of the pod's source, or of an env file"),
	},
	reflect.TypeFor[v1.EnvVarSource](): {
		"fieldRef":         m("pod metadata, node name, service account, pod and host IPs"),
		"resourceFieldRef": m("a container's limits and requests"),
		"configMapKeyRef":  m("a key of a ConfigMap of the pod's source"),
		"secretKeyRef":     m("a key of a Secret of the pod's source"),
		"fileKeyRef":       m("a key of an env file in a disk emptyDir, read when the container is created"),
	},
	reflect.TypeFor[v1.FileKeySelector](): {
		"volumeName": m("the pod's disk emptyDir holding the file (a Memory one is refused)"),
		"path":       m("the file, a relative path in the volume without '..'"),
		"key":        m("the variable of the file (VAR='value' lines) whose value is read"),
		"optional":   m("a missing file or key leaves the variable unset instead of waiting"),
	},
	reflect.TypeFor[v1.ObjectFieldSelector](): {
		"apiVersion": m("v1 only"),
		"fieldPath":  m("one of the downward API paths berth knows"),
	},
	reflect.TypeFor[v1.ResourceFieldSelector](): {
		"containerName": m("the container whose resources are read (default: this one)"),
		"resource":      m("limits or requests of cpu, memory or ephemeral-storage"),
		"divisor":       m("the unit, rounded up"),
	},
	reflect.TypeFor[v1.EnvFromSource](): {
		"prefix":       m("prepended to every key"),
		"configMapRef": m("a ConfigMap of the pod's source"),
		"secretRef":    m("a Secret of the pod's source"),
	},
	reflect.TypeFor[v1.ConfigMapKeySelector](): {
		"key":      m("its key"),
		"optional": m("a missing ConfigMap or key leaves the variable unset"),
	},
	reflect.TypeFor[v1.SecretKeySelector](): {
		"key":      m("its key"),
		"optional": m("a missing Secret or key leaves the variable unset"),
	},
	reflect.TypeFor[v1.ConfigMapEnvSource](): {
		"optional": m("a missing ConfigMap sets nothing"),
	},
	reflect.TypeFor[v1.SecretEnvSource](): {
		"optional": m("a missing Secret sets nothing"),
	},
	reflect.TypeFor[v1.LocalObjectReference](): {
		"name": m("the object's name, in the pod's namespace and source"),
	},
	reflect.TypeFor[v1.ConfigMapVolumeSource](): {
		"defaultUser": ref("file owners are not implemented; use fsGroup"),
		"items":       m("the keys projected, and their paths"),
		"defaultMode": m("the files' mode (default 0644)"),
		"optional":    m("a missing ConfigMap gives an empty volume"),
	},
	reflect.TypeFor[v1.SecretVolumeSource](): {
		"defaultUser": ref("file owners are not implemented; use fsGroup"),
		"secretName":  m("the Secret, of the pod's source and namespace; its files are on a tmpfs"),
		"items":       m("the keys projected, and their paths"),
		"defaultMode": m("the files' mode (default 0644)"),
		"optional":    m("a missing Secret gives an empty volume"),
	},
	reflect.TypeFor[v1.KeyToPath](): {
		"user": ref("file owners are not implemented; use fsGroup"),
		"key":  m("the key"),
		"path": m("a relative path in the volume, without '..'"),
		"mode": m("the file's mode"),
	},
	reflect.TypeFor[v1.ProjectedVolumeSource](): {
		"defaultUser": ref("file owners are not implemented; use fsGroup"),
		"sources":     m("configMap, secret and downwardAPI sources in one directory"),
		"defaultMode": m("the files' mode (default 0644)"),
	},
	reflect.TypeFor[v1.VolumeProjection](): {
		"configMap":           m("a ConfigMap's keys"),
		"secret":              m("a Secret's keys (the volume is then a tmpfs)"),
		"downwardAPI":         m("pod fields and resources"),
		"serviceAccountToken": ref("service account tokens are issued by an API server"),
		"clusterTrustBundle":  ref("cluster trust bundles need an API server"),
		"podCertificate":      ref("pod certificates are issued through an API server"),
	},
	reflect.TypeFor[v1.ConfigMapProjection](): {
		"items":    m("the keys projected, and their paths"),
		"optional": m("a missing ConfigMap projects nothing"),
	},
	reflect.TypeFor[v1.SecretProjection](): {
		"items":    m("the keys projected, and their paths"),
		"optional": m("a missing Secret projects nothing"),
	},
	reflect.TypeFor[v1.DownwardAPIProjection](): {
		"items": m("the files"),
	},
	reflect.TypeFor[v1.DownwardAPIVolumeSource](): {
		"defaultUser": ref("file owners are not implemented; use fsGroup"),
		"items":       m("the files"),
		"defaultMode": m("the files' mode (default 0644)"),
	},
	reflect.TypeFor[v1.DownwardAPIVolumeFile](): {
		"user":             ref("file owners are not implemented; use fsGroup"),
		"path":             m("a relative path in the volume, without '..'"),
		"fieldRef":         m("metadata name, namespace, uid, labels, annotations (labels and annotations updated live)"),
		"resourceFieldRef": m("a container's limits and requests"),
		"mode":             m("the file's mode"),
	},
	reflect.TypeFor[v1.ResourceRequirements](): {
		"limits":   m("cpu: CFS quota; memory: memory limit, no swap; ephemeral-storage: not enforced (warning)"),
		"requests": m("cpu: CPU shares; memory: QoS and OOM score; ephemeral-storage: not enforced (warning)"),
		"claims":   ref("dynamic resource allocation needs the API server"),
	},
	reflect.TypeFor[v1.Affinity](): {
		"nodeAffinity":    m("its required terms"),
		"podAffinity":     na("no scheduler: other nodes' pods are unknown"),
		"podAntiAffinity": na("no scheduler: other nodes' pods are unknown"),
	},
	reflect.TypeFor[v1.NodeAffinity](): {
		"requiredDuringSchedulingIgnoredDuringExecution":  m("admission: refused (NodeAffinity) unless a term matches the node"),
		"preferredDuringSchedulingIgnoredDuringExecution": na("no scheduler: a preference between nodes"),
	},
	reflect.TypeFor[v1.NodeSelector](): {
		"nodeSelectorTerms": m("ORed; at least one must match"),
	},
	reflect.TypeFor[v1.NodeSelectorTerm](): {
		"matchExpressions": m("the node's labels (node_labels)"),
		"matchFields":      m("metadata.name: the node's name"),
	},
	reflect.TypeFor[v1.NodeSelectorRequirement](): {
		"key":      m("a label name, or metadata.name in matchFields"),
		"operator": m("In, NotIn, Exists, DoesNotExist, Gt, Lt"),
		"values":   m("label values; one integer for Gt and Lt"),
	},
	reflect.TypeFor[v1.ContainerResizePolicy](): {
		"resourceName":  na("no in-place resize API"),
		"restartPolicy": na("no in-place resize API"),
	},
	reflect.TypeFor[v1.VolumeMount](): {
		"name":              m("the volume"),
		"readOnly":          m("a read-only bind"),
		"recursiveReadOnly": m("Disabled, IfPossible or Enabled"),
		"mountPath":         m("the bind's target"),
		"subPath":           m("a bind of a path inside the volume"),
		"mountPropagation":  m("None: rprivate, HostToContainer: rslave, Bidirectional: rshared"),
		"subPathExpr":       m("subPath after $(VAR) expansion"),
		"bindMountOptions":  ref("bind mount options are not implemented"),
	},
	reflect.TypeFor[v1.Probe](): {
		"initialDelaySeconds":           m("delay before the first probe"),
		"timeoutSeconds":                m("timeout of one probe"),
		"periodSeconds":                 m("interval between probes"),
		"successThreshold":              m("successes to pass"),
		"failureThreshold":              m("failures to fail"),
		"terminationGracePeriodSeconds": ref("probe-level grace periods are not implemented; berth uses the pod's"),
	},
	reflect.TypeFor[v1.ProbeHandler](): {
		"exec":      m("docker exec"),
		"httpGet":   m("an HTTP GET from the node"),
		"tcpSocket": m("a TCP connect from the node"),
		"grpc":      m("a grpc.health.v1 Check from the node; SERVING passes"),
	},
	reflect.TypeFor[v1.GRPCAction](): {
		"port":    m("the port on the pod's IP, by number"),
		"service": m("the service of the health check request (default \"\")"),
		"mode":    m("Plaintext (default) or TLS without certificate verification"),
	},
	reflect.TypeFor[v1.ExecAction](): {
		"command": m("run in the container"),
	},
	reflect.TypeFor[v1.HTTPGetAction](): {
		"path":        m("the request path"),
		"port":        m("the port, by number or name"),
		"host":        m("the host (default: the pod IP)"),
		"scheme":      m("HTTP or HTTPS"),
		"httpHeaders": m("request headers"),
		"protocol":    m("HTTP1 only"),
	},
	reflect.TypeFor[v1.HTTPHeader](): {
		"name":  m("header name"),
		"value": m("header value"),
	},
	reflect.TypeFor[v1.TCPSocketAction](): {
		"port": m("the port, by number or name"),
		"host": m("the host (default: the pod IP)"),
	},
	reflect.TypeFor[v1.Lifecycle](): {
		"postStart":  m("run after the container starts; failure kills it"),
		"preStop":    m("run before the container is stopped"),
		"stopSignal": m("the container's stop signal"),
	},
	reflect.TypeFor[v1.LifecycleHandler](): {
		"exec":      m("docker exec"),
		"httpGet":   m("an HTTP GET from the node"),
		"tcpSocket": m("a TCP connect from the node"),
		"sleep":     m("a pause"),
	},
	reflect.TypeFor[v1.SleepAction](): {
		"seconds": m("the pause"),
	},
	reflect.TypeFor[v1.SecurityContext](): {
		"capabilities":             m("Docker CapAdd and CapDrop"),
		"privileged":               m("a privileged container (allow_host_access)"),
		"seLinuxOptions":           m("label=user:/role:/type:/level:"),
		"windowsOptions":           ne("Windows only, ignored on a Linux node"),
		"runAsUser":                m("the Docker user"),
		"runAsGroup":               m("the Docker user's group"),
		"runAsNonRoot":             m("uid 0 fails the create"),
		"readOnlyRootFilesystem":   m("a read-only root filesystem"),
		"allowPrivilegeEscalation": m("false gives no-new-privileges"),
		"procMount":                m("Unmasked: no masked /proc paths (allow_host_access)"),
		"seccompProfile":           m("Docker seccomp option"),
		"appArmorProfile":          m("Docker apparmor option"),
	},
	reflect.TypeFor[v1.PodSecurityContext](): {
		"seLinuxOptions":           m("default of every container's"),
		"windowsOptions":           ne("Windows only, ignored on a Linux node"),
		"runAsUser":                m("default of every container's"),
		"runAsGroup":               m("default of every container's"),
		"runAsNonRoot":             m("default of every container's"),
		"supplementalGroups":       m("additional groups of every container"),
		"supplementalGroupsPolicy": m("Merge; Strict is refused"),
		"fsGroup":                  m("an additional group of every container, and the group of emptyDirs"),
		"sysctls":                  m("set on the sandbox"),
		"fsGroupChangePolicy":      m("both policies act alike: berth sets an emptyDir's group when it creates it"),
		"seccompProfile":           m("default of every container's"),
		"appArmorProfile":          m("default of every container's"),
		"seLinuxChangePolicy":      ne("berth does not relabel volumes"),
	},
	reflect.TypeFor[v1.Capabilities](): {
		"add":  m("Docker CapAdd (beyond Docker's defaults: allow_host_access)"),
		"drop": m("Docker CapDrop"),
	},
	reflect.TypeFor[v1.SELinuxOptions](): {
		"user":  m("label=user:"),
		"role":  m("label=role:"),
		"type":  m("label=type:"),
		"level": m("label=level:"),
	},
	reflect.TypeFor[v1.SeccompProfile](): {
		"type":             m("RuntimeDefault, Unconfined or Localhost"),
		"localhostProfile": m("the file <root_dir>/seccomp/<localhostProfile>"),
	},
	reflect.TypeFor[v1.AppArmorProfile](): {
		"type":             m("RuntimeDefault, Unconfined or Localhost"),
		"localhostProfile": m("the loaded profile's name"),
	},
	reflect.TypeFor[v1.WindowsSecurityContextOptions](): {
		"gmsaCredentialSpecName": na("a Linux node"),
		"gmsaCredentialSpec":     na("a Linux node"),
		"runAsUserName":          na("a Linux node"),
		"hostProcess":            na("a Linux node"),
	},
	reflect.TypeFor[v1.Sysctl](): {
		"name":  m("the sysctl"),
		"value": m("its value"),
	},
	reflect.TypeFor[v1.Volume](): {
		"name": m("the volume's name in mounts"),
	},
	reflect.TypeFor[v1.VolumeSource](): {
		"hostPath":              m("a host directory or file (allow_host_access)"),
		"emptyDir":              m("a pod directory, or a tmpfs for medium Memory"),
		"gcePersistentDisk":     ref(otherVolume),
		"awsElasticBlockStore":  ref(otherVolume),
		"gitRepo":               ref(otherVolume),
		"secret":                m("the Secret's keys as files on a per-pod tmpfs, updated live"),
		"nfs":                   ref(otherVolume),
		"iscsi":                 ref(otherVolume),
		"glusterfs":             ref(otherVolume),
		"persistentVolumeClaim": m("a node-local engine volume per claim, created on first use and kept when the pod goes"),
		"rbd":                   ref(otherVolume),
		"flexVolume":            ref(otherVolume),
		"cinder":                ref(otherVolume),
		"cephfs":                ref(otherVolume),
		"flocker":               ref(otherVolume),
		"downwardAPI":           m("pod fields and resources as files, labels and annotations updated live"),
		"fc":                    ref(otherVolume),
		"azureFile":             ref(otherVolume),
		"configMap":             m("the ConfigMap's keys as files, updated live (..data symlink swap)"),
		"vsphereVolume":         ref(otherVolume),
		"quobyte":               ref(otherVolume),
		"azureDisk":             ref(otherVolume),
		"photonPersistentDisk":  ref(otherVolume),
		"projected":             m("configMap, secret and downwardAPI sources in one directory"),
		"portworxVolume":        ref(otherVolume),
		"scaleIO":               ref(otherVolume),
		"storageos":             ref(otherVolume),
		"csi":                   ref(otherVolume),
		"ephemeral":             ref(otherVolume),
		"image":                 ref(otherVolume),
	},
	reflect.TypeFor[v1.PersistentVolumeClaimVolumeSource](): {
		"claimName": m("the claim (namespace/claimName) whose volume is mounted"),
		"readOnly":  m("mounts it read-only"),
	},
	reflect.TypeFor[v1.HostPathVolumeSource](): {
		"path": m("the host path"),
		"type": m("checked or created as the kubelet does"),
	},
	reflect.TypeFor[v1.EmptyDirVolumeSource](): {
		"medium":    m("disk, or Memory: one tmpfs per pod volume"),
		"sizeLimit": m("Memory: the tmpfs size; disk: enforced by eviction (controller/eviction.go)"),
		"mode":      m("the directory's permission bits instead of 0777 (an fsGroup adds group rwx and setgid)"),
	},
	reflect.TypeFor[v1.PodDNSConfig](): {
		"nameservers": m("resolv.conf nameserver lines"),
		"searches":    m("the resolv.conf search line"),
		"options":     m("the resolv.conf options line"),
	},
	reflect.TypeFor[v1.PodDNSConfigOption](): {
		"name":  m("option name"),
		"value": m("option value (name:value)"),
	},
	reflect.TypeFor[v1.HostAlias](): {
		"ip":        m("the address of an /etc/hosts line"),
		"hostnames": m("the names of that line"),
	},
	reflect.TypeFor[v1.PodOS](): {
		"name": m("admission: refused (PodOSNotSupported) unless the node's OS"),
	},
}

const otherVolume = "volume type; berth supports hostPath, emptyDir, configMap, secret, projected, downwardAPI and persistentVolumeClaim"

// classedField is a set field of a pod spec that is notApplicable,
// notEnforced or refused.
type classedField struct {
	path *field.Path
	rule fieldRule
}

// classedFields returns, in spec order, the set fields of spec that are
// notApplicable, notEnforced or refused; a field missing from podFields counts as
// refused. It does not descend into the fields it returns.
func classedFields(spec *v1.PodSpec) []classedField {
	var out []classedField
	walkFields(reflect.ValueOf(spec).Elem(), field.NewPath("spec"), &out)
	return out
}

func walkFields(v reflect.Value, p *field.Path, out *[]classedField) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			walkFields(v.Elem(), p, out)
		}
	case reflect.Slice:
		for i := range v.Len() {
			walkFields(v.Index(i), p.Index(i), out)
		}
	case reflect.Map:
		if _, ok := podFields[jsonfield.Elem(v.Type().Elem())]; !ok {
			return
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			walkFields(v.MapIndex(k), p.Key(fmt.Sprint(k)), out)
		}
	case reflect.Struct:
		rules, ok := podFields[v.Type()]
		if !ok {
			rules, ok = objectFields[v.Type()]
		}
		if !ok {
			return
		}
		t := v.Type()
		for i := range t.NumField() {
			sf := t.Field(i)
			name, inline := jsonfield.Name(sf)
			switch {
			case !sf.IsExported() || name == "-":
				continue
			case inline:
				walkFields(v.Field(i), p, out)
				continue
			case !isSet(v.Field(i)):
				continue
			}
			rule, ok := rules[name]
			if !ok {
				rule = ref("a field berth does not know")
			}
			fp := p.Child(name)
			if rule.class == notApplicable || rule.class == notEnforced || rule.class == refused {
				*out = append(*out, classedField{fp, rule})
				continue
			}
			walkFields(v.Field(i), fp, out)
		}
	}
}

// isSet reports whether a field holds a value: not zero, and not an empty
// list or map.
func isSet(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map:
		return v.Len() > 0
	}
	return !v.IsZero()
}

// refusedFields returns a Forbidden error for every set field of spec
// classed refused.
func refusedFields(spec *v1.PodSpec) field.ErrorList {
	var errs field.ErrorList
	for _, f := range classedFields(spec) {
		if f.rule.class == refused {
			errs = append(errs, notSupported(f.path, f.rule.what))
		}
	}
	return errs
}

// notSupported is the error of a field or value berth refuses.
func notSupported(p *field.Path, why string) *field.Error {
	return field.Forbidden(p, "not supported by berth ("+why+")")
}
