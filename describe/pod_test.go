package describe

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func fixture(now time.Time) (*v1.Pod, []v1.Event) {
	started := metav1.Time{Time: now.Add(-5 * time.Minute)}
	probe := &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080), Scheme: v1.URISchemeHTTP}},
		TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Labels: map[string]string{"app": "web", "tier": "front"},
			Annotations: map[string]string{"berth.io/source": "file", "berth.io/origin": "/etc/berth/pods/web.yaml",
				"berth.io/rejected-update": "spec.containers[0].image: Required value", "team": "a"}},
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{{Name: "setup", Image: "busybox:1", Command: []string{"sh", "-c"}, Args: []string{"echo hi"}}},
			Containers: []v1.Container{
				{Name: "app", Image: "berth/testapp:1", Args: []string{"serve"},
					Ports: []v1.ContainerPort{{ContainerPort: 8080, Protocol: v1.ProtocolTCP}},
					Env: []v1.EnvVar{{Name: "PORT", Value: "8080"}, {Name: "POD", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
						{Name: "DB", ValueFrom: &v1.EnvVarSource{FileKeyRef: &v1.FileKeySelector{VolumeName: "data", Path: "config.env", Key: "DB_ADDRESS"}}}},
					LivenessProbe:  probe,
					ReadinessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(8080)}}, TimeoutSeconds: 1, PeriodSeconds: 5, SuccessThreshold: 1, FailureThreshold: 3},
					Resources: v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")},
						Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}},
					VolumeMounts: []v1.VolumeMount{{Name: "data", MountPath: "/data", ReadOnly: true}}},
				{Name: "puller", Image: "big:1"},
			},
			Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}},
		},
		Status: v1.PodStatus{
			Phase: v1.PodRunning, PodIP: "172.17.0.5", PodIPs: []v1.PodIP{{IP: "172.17.0.5"}}, StartTime: &started, QOSClass: v1.PodQOSBurstable,
			Conditions: []v1.PodCondition{{Type: v1.PodInitialized, Status: v1.ConditionTrue}, {Type: v1.PodReady, Status: v1.ConditionFalse}},
			InitContainerStatuses: []v1.ContainerStatus{{Name: "setup", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
				Reason: "Completed", ExitCode: 0, StartedAt: started, FinishedAt: started}}}},
			ContainerStatuses: []v1.ContainerStatus{
				{Name: "app", ContainerID: "docker://abc123", ImageID: "docker-pullable://berth/testapp@sha256:feed", Ready: true, RestartCount: 2,
					State:                v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: started}},
					LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, StartedAt: started, FinishedAt: started}}},
				{Name: "puller", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating", Message: "pulling image big:1: 12.3 MiB of 40.1 MiB"}}},
			},
		},
	}
	ev := func(at time.Time, typ, reason, msg string) v1.Event {
		t := metav1.Time{Time: at}
		return v1.Event{InvolvedObject: v1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: "web", FieldPath: "spec.containers{app}"},
			Type: typ, Reason: reason, Message: msg, Source: v1.EventSource{Component: "berth"}, FirstTimestamp: t, LastTimestamp: t, Count: 1}
	}
	evs := []v1.Event{
		ev(now.Add(-5*time.Minute), v1.EventTypeNormal, "Started", "Started container app"),
		ev(now.Add(-4*time.Minute), v1.EventTypeWarning, "BackOff", "Back-off restarting failed container app"),
		ev(now.Add(-90*time.Second), v1.EventTypeWarning, "BackOff", "Back-off restarting failed container app"),
	}
	return p, evs
}

func TestDescribePod(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p, evs := fixture(now)
	var b bytes.Buffer
	if err := Pod(&b, p, evs, now); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// Each entry: a line matching this pattern (spaces between key and
	// value are tabwriter's alignment).
	for _, want := range []string{
		`^Name: +web$`,
		`^Namespace: +shop$`,
		`^Start Time: +Sun, 01 Mar 2026 11:55:00 \+0000$`,
		`^Labels: +app=web$`,
		`^ +tier=front$`,
		`^Annotations: +team: a$`,
		`^Status: +Running$`,
		`^IP: +172\.17\.0\.5$`,
		`^IPs:$`,
		`^  IP: +172\.17\.0\.5$`,
		`^Source: +file$`,
		`^Origin: +/etc/berth/pods/web\.yaml$`,
		`^Rejected update: +spec\.containers\[0\]\.image: Required value$`,
		`^Init Containers:$`,
		`^  setup:$`,
		`^    Command:$`,
		`^      sh$`,
		`^      echo hi$`,
		`^    State: +Terminated$`,
		`^      Reason: +Completed$`,
		`^Containers:$`,
		`^  app:$`,
		`^    Container ID: +docker://abc123$`,
		`^    Image: +berth/testapp:1$`,
		`^    Image ID: +docker-pullable://berth/testapp@sha256:feed$`,
		`^    Port: +8080/TCP$`,
		`^    Host Port: +0/TCP$`,
		`^    Args:$`,
		`^      serve$`,
		`^    State: +Running$`,
		`^      Started: +Sun, 01 Mar 2026 11:55:00 \+0000$`,
		`^    Last State: +Terminated$`,
		`^      Reason: +Error$`,
		`^      Exit Code: +1$`,
		`^    Ready: +True$`,
		`^    Restart Count: +2$`,
		`^    Limits:$`,
		`^      memory: +64Mi$`,
		`^    Requests:$`,
		`^      cpu: +100m$`,
		`^    Liveness: +http-get http://:8080/healthz delay=0s timeout=1s period=10s #success=1 #failure=3$`,
		`^    Readiness: +tcp-socket :8080 delay=0s timeout=1s period=5s #success=1 #failure=3$`,
		`^    Environment:$`,
		`^      PORT: +8080$`,
		`^      POD: +\(v1:metadata\.name\)$`,
		`^      DB: +<set to the key 'DB_ADDRESS' in the env file 'config.env' of volume 'data'>$`,
		`^    Mounts:$`,
		`^      /data from data \(ro\)$`,
		`^  puller:$`,
		`^    State: +Waiting$`,
		`^      Reason: +ContainerCreating$`,
		`^      Message: +pulling image big:1: 12\.3 MiB of 40\.1 MiB$`,
		`^    Ready: +False$`,
		`^    Port: +<none>$`,
		`^    Environment: +<none>$`,
		`^    Mounts: +<none>$`,
		`^Conditions:$`,
		`^  Type +Status$`,
		`^  Initialized +True $`,
		`^  Ready +False $`,
		`^Volumes:$`,
		`^  data:$`,
		`^    Type: +EmptyDir \(a temporary directory that shares a pod's lifetime\)$`,
		`^QoS Class: +Burstable$`,
		`^Events:$`,
		`^  Type +Reason +Age +From +Message$`,
		`^  ---- +------ +---- +---- +-------$`,
		`^  Normal +Started +5m +berth +Started container app$`,
		`^  Warning +BackOff +90s \(x2 over 4m\) +berth +Back-off restarting failed container app$`,
	} {
		if !regexp.MustCompile(`(?m)` + want).MatchString(out) {
			t.Errorf("no line matching %s in:\n%s", want, out)
		}
	}
	for _, absent := range []string{"berth.io/origin:", "Node:", "Message:  pulling image big:1: 12.3 MiB of 40.1 MiB\n      Message"} {
		if strings.Contains(out, absent) {
			t.Errorf("output contains %q:\n%s", absent, out)
		}
	}
	// Containers come in spec order, init containers first.
	if i, j, k := strings.Index(out, "  setup:"), strings.Index(out, "  app:"), strings.Index(out, "  puller:"); !(i < j && j < k) {
		t.Errorf("container order setup %d app %d puller %d", i, j, k)
	}

	b.Reset()
	bare := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: "default"},
		Spec: v1.PodSpec{NodeName: "node-1", Containers: []v1.Container{{Name: "c", Image: "img"}}}}
	if err := Pod(&b, bare, nil, now); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`^Node: +node-1$`, `^Labels: +<none>$`, `^Annotations: +<none>$`, `^IPs: +<none>$`,
		`^    State: +Waiting$`, `^    Restart Count: +0$`, `^Volumes: +<none>$`, `^Events: +<none>$`} {
		if !regexp.MustCompile(`(?m)` + want).MatchString(b.String()) {
			t.Errorf("bare pod: no line matching %s in:\n%s", want, b.String())
		}
	}
}
