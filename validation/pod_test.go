package validation_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/validation"
)

func TestValidPodPasses(t *testing.T) {
	accepted(t, validPod(), validation.Options{})
}

func TestValidationRules(t *testing.T) {
	q := resource.MustParse
	cases := []struct {
		name   string
		mutate func(p *v1.Pod)
		field  string // expected field of the first error
		msg    string // expected start of its message
	}{
		{"name required", func(p *v1.Pod) { p.Name = "" }, "metadata.name", "Required value"},
		{"name subdomain", func(p *v1.Pod) { p.Name = "Web_1" }, "metadata.name", `Invalid value: "Web_1"`},
		{"namespace label", func(p *v1.Pod) { p.Namespace = "a.b" }, "metadata.namespace", `Invalid value: "a.b"`},
		{"no containers", func(p *v1.Pod) { p.Spec.Containers = nil }, "spec.containers", "Required value"},
		{"container name label", func(p *v1.Pod) { p.Spec.Containers[1].Name = "Side.car" }, "spec.containers[1].name", "Invalid value"},
		{"container name required", func(p *v1.Pod) { p.Spec.Containers[1].Name = "" }, "spec.containers[1].name", "Required value"},
		{"container name POD", func(p *v1.Pod) { p.Spec.Containers[1].Name = "POD" }, "spec.containers[1].name", `Invalid value: "POD"`},
		{"container name unique", func(p *v1.Pod) { p.Spec.Containers[1].Name = "web" }, "spec.containers[1].name", `Duplicate value: "web"`},
		{"container name unique with init", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "sidecar", Image: "busybox"}}
		}, "spec.containers[1].name", `Duplicate value: "sidecar"`},
		{"image required", func(p *v1.Pod) { p.Spec.Containers[1].Image = " " }, "spec.containers[1].image", "Required value"},
		{"pull policy", func(p *v1.Pod) { p.Spec.Containers[0].ImagePullPolicy = "Sometimes" }, "spec.containers[0].imagePullPolicy", "Unsupported value"},
		{"container port range", func(p *v1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 70000 }, "spec.containers[0].ports[0].containerPort", "Invalid value: 70000"},
		{"container port required", func(p *v1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 0 }, "spec.containers[0].ports[0].containerPort", "Required value"},
		{"host port range", func(p *v1.Pod) { p.Spec.Containers[0].Ports[0].HostPort = -1 }, "spec.containers[0].ports[0].hostPort", "Invalid value: -1"},
		{"protocol", func(p *v1.Pod) { p.Spec.Containers[0].Ports[0].Protocol = "tcp" }, "spec.containers[0].ports[0].protocol", `Unsupported value: "tcp"`},
		{"host IP", func(p *v1.Pod) { p.Spec.Containers[0].Ports[0].HostIP = "localhost" }, "spec.containers[0].ports[0].hostIP", "Invalid value"},
		{"host port unique", func(p *v1.Pod) {
			p.Spec.Containers[1].Ports = []v1.ContainerPort{{ContainerPort: 8081, HostPort: 18080, HostIP: "127.0.0.1"}}
		}, "spec.containers[1].ports[0].hostPort", `Duplicate value: "TCP/18080 on 127.0.0.1"`},
		{"port name unique", func(p *v1.Pod) {
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{Name: "http", ContainerPort: 1}, {Name: "http", ContainerPort: 2}}
		}, "spec.containers[0].ports[1].name", "Duplicate value"},
		{"env name", func(p *v1.Pod) { p.Spec.Containers[1].Env[0].Name = "" }, "spec.containers[1].env[0].name", "Required value"},
		{"env value and valueFrom", func(p *v1.Pod) {
			p.Spec.Containers[1].Env[0].ValueFrom = &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}
		}, "spec.containers[1].env[0].valueFrom", "Invalid value"},
		{"volume name unique", func(p *v1.Pod) { p.Spec.Volumes = append(p.Spec.Volumes, p.Spec.Volumes[0]) }, "spec.volumes[1].name", `Duplicate value: "data"`},
		{"volume type", func(p *v1.Pod) {
			p.Spec.Volumes[0].VolumeSource = v1.VolumeSource{NFS: &v1.NFSVolumeSource{}}
		}, "spec.volumes[0].nfs", "Forbidden: not supported by berth (volume type; berth supports hostPath, emptyDir"},
		{"two volume types", func(p *v1.Pod) {
			p.Spec.Volumes[0].HostPath = &v1.HostPathVolumeSource{Path: "/tmp"}
		}, "spec.volumes[0].emptyDir", "Forbidden: may not specify more than 1 volume type"},
		{"hostPath absolute", func(p *v1.Pod) {
			p.Spec.Volumes[0].VolumeSource = v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "tmp"}}
		}, "spec.volumes[0].hostPath.path", `Invalid value: "tmp": must be an absolute path`},
		{"emptyDir medium", func(p *v1.Pod) { p.Spec.Volumes[0].EmptyDir.Medium = "HugePages" }, "spec.volumes[0].emptyDir.medium", "Unsupported value"},
		{"mount names volume", func(p *v1.Pod) { p.Spec.Containers[0].VolumeMounts[0].Name = "nope" }, "spec.containers[0].volumeMounts[0].name", `Not found: "nope"`},
		{"mountPath absolute", func(p *v1.Pod) { p.Spec.Containers[0].VolumeMounts[0].MountPath = "data" }, "spec.containers[0].volumeMounts[0].mountPath", "Invalid value"},
		{"mountPath required", func(p *v1.Pod) { p.Spec.Containers[0].VolumeMounts[0].MountPath = "" }, "spec.containers[0].volumeMounts[0].mountPath", "Required value"},
		{"restartPolicy", func(p *v1.Pod) { p.Spec.RestartPolicy = "Sometimes" }, "spec.restartPolicy", `Unsupported value: "Sometimes"`},
		{"negative quantity", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceMemory: q("-1Mi")}
		}, "spec.containers[0].resources.limits[memory]", "Invalid value"},
		{"requests above limits", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceCPU: q("500m")}
			p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: q("1")}
		}, "spec.containers[0].resources.requests[cpu]", `Invalid value: "1": must be less than or equal to cpu limit of 500m`},
		{"grace period", func(p *v1.Pod) {
			g := int64(-1)
			p.Spec.TerminationGracePeriodSeconds = &g
		}, "spec.terminationGracePeriodSeconds", "Invalid value: -1"},
		{"probe without handler", func(p *v1.Pod) { p.Spec.Containers[0].LivenessProbe = &v1.Probe{} }, "spec.containers[0].livenessProbe", "Required value: must specify a handler type"},
		{"probe with two handlers", func(p *v1.Pod) {
			p.Spec.Containers[0].ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{
				HTTPGet:   &v1.HTTPGetAction{Port: intstr.FromInt32(8080)},
				TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(8080)},
			}}
		}, "spec.containers[0].readinessProbe.tcpSocket", "Forbidden: may not specify more than 1 handler type"},
		{"probe port", func(p *v1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(0)}}}
		}, "spec.containers[0].livenessProbe.tcpSocket.port", "Invalid value: 0"},
		{"liveness success threshold", func(p *v1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}, SuccessThreshold: 2}
		}, "spec.containers[0].livenessProbe.successThreshold", "Invalid value: 2: must be 1"},
		{"hook without handler", func(p *v1.Pod) {
			p.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{}}
		}, "spec.containers[0].lifecycle.preStop", "Required value"},
		{"init container probe", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "init", Image: "busybox",
				LivenessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}}}
		}, "spec.initContainers[0].livenessProbe", "Forbidden"},
		{"ephemeral containers", func(p *v1.Pod) {
			p.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "dbg", Image: "busybox"}}}
		}, "spec.ephemeralContainers", "Forbidden"},
		{"privileged", func(p *v1.Pod) {
			yes := true
			p.Spec.Containers[1].SecurityContext = &v1.SecurityContext{Privileged: &yes}
		}, "spec.containers[1].securityContext.privileged", `Forbidden: violates PodSecurity "baseline"`},
		{"hostPath", func(p *v1.Pod) {
			p.Spec.Volumes[0].VolumeSource = v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/srv"}}
		}, "spec.volumes[0].hostPath", `Forbidden: violates PodSecurity "baseline"`},
		{"hostNetwork", func(p *v1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports[0].HostPort = 8080
		}, "spec.hostNetwork", `Forbidden: violates PodSecurity "baseline"`},
		{"hostPID", func(p *v1.Pod) { p.Spec.HostPID = true }, "spec.hostPID", `Forbidden: violates PodSecurity "baseline"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := validPod()
			tc.mutate(p)
			data, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			pods, errs := manifest.Decode("test", "o.json", data, manifest.Options{})
			if len(pods) != 0 || len(errs) == 0 {
				t.Fatalf("accepted: pods %d errs %v", len(pods), errs)
			}
			found := false
			for _, e := range errs {
				if e.Field == tc.field && strings.HasPrefix(e.Err, tc.msg) {
					found = true
				}
				if wantKey := manifest.PodKey(p.Namespace, p.Name); p.Name != "" && e.PodKey != wantKey {
					t.Errorf("PodKey %q, want %q", e.PodKey, wantKey)
				}
			}
			if !found {
				t.Errorf("got %v, want field %q message %q", errs, tc.field, tc.msg)
			}
		})
	}
}

func TestHostAccessAllowed(t *testing.T) {
	p := validPod()
	yes := true
	p.Spec.HostNetwork = true
	p.Spec.HostPID = true
	p.Spec.Containers[0].Ports[0].HostPort = 8080
	p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{Privileged: &yes}
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "sock", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/var/run/docker.sock"}}})
	accepted(t, p, validation.Options{Level: model.LevelPrivileged})

	data, _ := json.Marshal(p)
	_, errs := manifest.Decode("test", "o", data, manifest.Options{})
	var fields []string
	for _, e := range errs {
		fields = append(fields, e.Field)
	}
	want := []string{"spec.hostNetwork", "spec.hostPID", "spec.volumes[1].hostPath", "spec.containers[0].securityContext.privileged"}
	if !reflect.DeepEqual(fields, want) {
		t.Errorf("fields %v, want %v", fields, want)
	}
}

func TestHostPortConflicts(t *testing.T) {
	ok := [][2]v1.ContainerPort{
		{{ContainerPort: 1, HostPort: 80, HostIP: "127.0.0.1"}, {ContainerPort: 2, HostPort: 80, HostIP: "127.0.0.2"}},
		{{ContainerPort: 1, HostPort: 80}, {ContainerPort: 2, HostPort: 80, Protocol: v1.ProtocolUDP}},
		{{ContainerPort: 1}, {ContainerPort: 2}},
	}
	bad := [][2]v1.ContainerPort{
		{{ContainerPort: 1, HostPort: 80}, {ContainerPort: 2, HostPort: 80}},
		{{ContainerPort: 1, HostPort: 80, HostIP: "0.0.0.0"}, {ContainerPort: 2, HostPort: 80, HostIP: "127.0.0.1"}},
	}
	for i, set := range append(ok, bad...) {
		p := validPod()
		p.Spec.Containers[0].Ports = []v1.ContainerPort{set[0]}
		p.Spec.Containers[1].Ports = []v1.ContainerPort{set[1]}
		manifest.Default("t", p, false)
		errs := validation.Pod(p, validation.Options{Level: model.LevelPrivileged})
		if want := i >= len(ok); (len(errs) > 0) != want {
			t.Errorf("%d: %v: errs %v", i, set, errs)
		}
	}
}
