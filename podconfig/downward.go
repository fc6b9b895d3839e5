package podconfig

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/berth-dev/berth/model"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// PodIPs is what the downward API reports as status.podIP(s) and hostIP.
type PodIPs struct {
	PodIP  string
	HostIP string
}

// fieldRefValue resolves an env fieldRef as the kubelet's
// podFieldSelectorRuntimeValue does; validation admits only these paths.
func (er *envResolver) fieldRefValue(pod *v1.Pod, path string, ips PodIPs) (string, error) {
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return er.cfg.Node, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs":
		return ips.PodIP, nil
	case "status.hostIP", "status.hostIPs":
		return ips.HostIP, nil
	}
	if _, _, ok := model.MetadataFieldRef(path); ok {
		return metadataValue(pod, path), nil
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}

// metadataValue is the downward-API value of a metadata fieldPath: a
// label's or annotation's value, "" for any other path.
func metadataValue(pod *v1.Pod, path string) string {
	switch m, key, _ := model.MetadataFieldRef(path); m {
	case "labels":
		return pod.Labels[key]
	case "annotations":
		return pod.Annotations[key]
	}
	return ""
}

// resourceFieldValue resolves an env resourceFieldRef as the kubelet's
// ExtractResourceValueByContainerAndNodeAllocatable: the named container's
// value divided by divisor (default 1) and rounded up, requests defaulting
// to limits and limits to the node's capacity.
func (er *envResolver) resourceFieldValue(pod *v1.Pod, self *v1.Container, ref *v1.ResourceFieldSelector) (string, error) {
	ctr := self
	if ref.ContainerName != "" && ref.ContainerName != self.Name {
		ctr = nil
		for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
			for i := range list {
				if list[i].Name == ref.ContainerName {
					ctr = &list[i]
				}
			}
		}
		if ctr == nil {
			return "", fmt.Errorf("resourceFieldRef: no container %q", ref.ContainerName)
		}
	}
	kind, name, _ := strings.Cut(ref.Resource, ".")
	res := v1.ResourceName(name)
	q, ok := ctr.Resources.Limits[res]
	if kind == "requests" {
		if r, rok := ctr.Resources.Requests[res]; rok {
			q, ok = r, true
		}
		if !ok {
			q, ok = resource.Quantity{}, true // no request is a request of 0
		}
	}
	if !ok {
		q = er.nodeCapacity(res)
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	var v float64
	if res == v1.ResourceCPU {
		v = math.Ceil(float64(q.MilliValue()) / float64(divisor.MilliValue()))
	} else {
		v = math.Ceil(float64(q.Value()) / float64(divisor.Value()))
	}
	return strconv.FormatInt(int64(v), 10), nil
}

// nodeCapacity is the node's allocatable amount of res: berth reserves
// nothing, so its capacity (ephemeral storage: root_dir's filesystem).
func (er *envResolver) nodeCapacity(res v1.ResourceName) resource.Quantity {
	switch res {
	case v1.ResourceCPU:
		return *resource.NewMilliQuantity(er.cfg.NodeInfo.CPUMilli, resource.DecimalSI)
	case v1.ResourceMemory:
		return *resource.NewQuantity(er.cfg.NodeInfo.Memory, resource.BinarySI)
	case v1.ResourceEphemeralStorage:
		if n, err := er.paths.Capacity(); err == nil {
			return *resource.NewQuantity(n, resource.BinarySI)
		}
	}
	return resource.Quantity{}
}
