package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
)

// Label keys of every container and volume berth creates: berth's whole
// label scheme. Containers are labelled through ContainerLabels.Encode and
// read through DecodeLabels (volumes through VolumeLabels); only selectors
// name a key on its own.
const (
	LabelManaged       = "io.berth.managed"
	LabelPodNamespace  = "io.berth.pod.namespace"
	LabelPodName       = "io.berth.pod.name"
	LabelPodUID        = "io.berth.pod.uid"
	LabelContainerName = "io.berth.container.name"
	LabelContainerHash = "io.berth.container.hash"
	LabelSource        = "io.berth.source"
	LabelNode          = "io.berth.node"
	LabelRestartCount  = "io.berth.restart.count"
	LabelAttempt       = "io.berth.attempt"
	LabelGracePeriod   = "io.berth.termination.grace"
	LabelHostNetwork   = "io.berth.hostnetwork"
	// LabelSandbox names the sandbox container an app container joined, so
	// a container left in a replaced sandbox is recognised.
	LabelSandbox = "io.berth.sandbox.id"
	// LabelPreStop carries a container's preStop hook (and ports, for named
	// ports), so the hook runs even when the pod's spec is gone or berth
	// restarted.
	LabelPreStop = "io.berth.prestop"
	// LabelSidecar is a sidecar's position among its pod's init
	// containers, so its stop keeps the kubelet's order when the pod's spec
	// is gone.
	LabelSidecar = "io.berth.sidecar"
	// LabelPodCreated is when the pod (its UID) was first accepted, RFC
	// 3339 with nanoseconds, so its creationTimestamp survives a restart
	// of berth.
	LabelPodCreated = "io.berth.pod.created"
)

// Image labels, on the images berth builds itself (the pause image).
const (
	// labelImage marks images berth built itself.
	labelImage = "io.berth.image"
	// LabelImageBinary is the sha256 of the binary a built image holds, so
	// a changed binary (an upgrade under the same tag) is rebuilt.
	LabelImageBinary = "io.berth.binary-sha256"
)

// ContainerLabels is what berth's labels say of one container it created.
type ContainerLabels struct {
	Namespace, Pod, PodUID string
	Container              string
	Hash                   string
	Source                 string
	Node                   string
	Attempt, RestartCount  int
	// GracePeriod is the termination grace period in seconds; nil when
	// unknown (a container labelled by hand), and then never encoded.
	GracePeriod *int64
	// HostNetwork is set on the app containers of a hostNetwork pod.
	HostNetwork bool
	// Sandbox is the ID of the sandbox an app container joined; "" for a
	// sandbox.
	Sandbox string
	// PreStop is the container's preStop hook; nil when it has none.
	PreStop *PreStop
	// Sidecar is the index of a sidecar among the pod's init containers;
	// nil for every other container.
	Sidecar *int
	// PodCreated is when the pod was first accepted (model.Pod.SeenAt);
	// zero when unknown, and then never encoded.
	PodCreated time.Time
}

// PreStop is a preStop hook as LabelPreStop carries it; its JSON is the
// label's value, which existing containers hold: do not rename the tags.
type PreStop struct {
	Handler *v1.LifecycleHandler `json:"h"`
	Ports   []v1.ContainerPort   `json:"p,omitempty"`
}

// Encode is the labels map of a container, LabelManaged included. The
// optional labels (grace period, hostNetwork, sandbox, preStop, sidecar,
// pod creation time) are left out when unset.
func (l ContainerLabels) Encode() map[string]string {
	m := map[string]string{
		LabelManaged:       "true",
		LabelPodNamespace:  l.Namespace,
		LabelPodName:       l.Pod,
		LabelPodUID:        l.PodUID,
		LabelContainerName: l.Container,
		LabelContainerHash: l.Hash,
		LabelSource:        l.Source,
		LabelNode:          l.Node,
		LabelAttempt:       strconv.Itoa(l.Attempt),
		LabelRestartCount:  strconv.Itoa(l.RestartCount),
	}
	if l.GracePeriod != nil {
		m[LabelGracePeriod] = strconv.FormatInt(*l.GracePeriod, 10)
	}
	if l.HostNetwork {
		m[LabelHostNetwork] = "true"
	}
	if l.Sandbox != "" {
		m[LabelSandbox] = l.Sandbox
	}
	if l.PreStop != nil {
		b, _ := json.Marshal(l.PreStop) // v1 types always marshal
		m[LabelPreStop] = string(b)
	}
	if l.Sidecar != nil {
		m[LabelSidecar] = strconv.Itoa(*l.Sidecar)
	}
	if !l.PodCreated.IsZero() {
		m[LabelPodCreated] = l.PodCreated.UTC().Format(time.RFC3339Nano)
	}
	return m
}

// DecodeLabels reads a container's labels. Every well-formed label is
// decoded even when another is not; the error names the malformed ones (a
// number that does not parse, a negative grace period or sidecar index, a
// hostNetwork other than "true", a preStop that is not a hook, a creation
// time that is not RFC 3339), each left at
// its zero value.
// An absent label is no error.
func DecodeLabels(labels map[string]string) (ContainerLabels, error) {
	l := ContainerLabels{
		Namespace: labels[LabelPodNamespace],
		Pod:       labels[LabelPodName],
		PodUID:    labels[LabelPodUID],
		Container: labels[LabelContainerName],
		Hash:      labels[LabelContainerHash],
		Source:    labels[LabelSource],
		Node:      labels[LabelNode],
		Sandbox:   labels[LabelSandbox],
	}
	var errs []error
	bad := func(key, v string, err error) {
		errs = append(errs, fmt.Errorf("label %s=%q: %w", key, v, err))
	}
	count := func(key string, n *int) {
		if v, ok := labels[key]; ok {
			i, err := strconv.Atoi(v)
			if err != nil {
				bad(key, v, err)
				return
			}
			*n = i
		}
	}
	count(LabelAttempt, &l.Attempt)
	count(LabelRestartCount, &l.RestartCount)
	if v, ok := labels[LabelGracePeriod]; ok {
		switch s, err := strconv.ParseInt(v, 10, 64); {
		case err != nil:
			bad(LabelGracePeriod, v, err)
		case s < 0:
			bad(LabelGracePeriod, v, errors.New("negative"))
		default:
			l.GracePeriod = &s
		}
	}
	if v, ok := labels[LabelHostNetwork]; ok {
		if v == "true" {
			l.HostNetwork = true
		} else {
			bad(LabelHostNetwork, v, errors.New(`not "true"`))
		}
	}
	if v, ok := labels[LabelSidecar]; ok {
		switch i, err := strconv.Atoi(v); {
		case err != nil:
			bad(LabelSidecar, v, err)
		case i < 0:
			bad(LabelSidecar, v, errors.New("negative"))
		default:
			l.Sidecar = &i
		}
	}
	if v, ok := labels[LabelPodCreated]; ok {
		if t, err := time.Parse(time.RFC3339Nano, v); err != nil {
			bad(LabelPodCreated, v, err)
		} else {
			l.PodCreated = t
		}
	}
	if v, ok := labels[LabelPreStop]; ok {
		var ps PreStop
		switch err := json.Unmarshal([]byte(v), &ps); {
		case err != nil:
			bad(LabelPreStop, v, err)
		case ps.Handler == nil:
			bad(LabelPreStop, v, errors.New("no handler"))
		default:
			l.PreStop = &ps
		}
	}
	return l, errors.Join(errs...)
}

// Claim volume labels, on the engine volume holding a
// PersistentVolumeClaim's data: its namespace and name (it carries no pod
// UID, so no pod's removal takes it), and LabelSource, the source whose
// pod made it.
const (
	LabelClaimNamespace = "io.berth.pvc.namespace"
	LabelClaimName      = "io.berth.pvc.name"
	// ClaimLabelPrefix begins every claim volume label's key.
	ClaimLabelPrefix = "io.berth.pvc."
	// ClaimVolumePrefix begins every claim volume's name.
	ClaimVolumePrefix = "berth-pvc_"
)

// ClaimVolumeName is the engine volume of claim namespace/name of source's
// pods on node: each source has its own claims' data, as it has its own
// objects.
func ClaimVolumeName(source, namespace, name, node string) string {
	return ClaimVolumePrefix + source + "_" + namespace + "_" + name + "_" + node
}

// ClaimVolumeLabels are the labels of claim namespace/name's volume, made
// for a pod of source on node.
func ClaimVolumeLabels(namespace, name, node, source string) map[string]string {
	return map[string]string{LabelManaged: "true", LabelNode: node, LabelClaimNamespace: namespace, LabelClaimName: name, LabelSource: source}
}

// VolumeLabels are the labels of an engine volume of pod uid (a Memory
// emptyDir), by which its removal finds it.
func VolumeLabels(namespace, pod, uid, node string) map[string]string {
	return map[string]string{LabelManaged: "true", LabelPodUID: uid,
		LabelPodNamespace: namespace, LabelPodName: pod, LabelNode: node}
}

// FillFromLabels sets the pod identity fields of c from its labels; a
// malformed count is 0.
func FillFromLabels(c *model.Container, labels map[string]string) {
	l, _ := DecodeLabels(labels)
	c.Labels = labels
	if l.Namespace != "" || l.Pod != "" {
		c.PodKey = l.Namespace + "/" + l.Pod
	}
	c.PodUID = l.PodUID
	c.Name = l.Container
	c.Hash = l.Hash
	c.Source = l.Source
	c.Attempt = l.Attempt
	c.RestartCount = l.RestartCount
}
