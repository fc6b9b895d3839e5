package printers

import (
	"fmt"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// PodColumns are kubectl's pod columns; priority 1 shows with -o wide.
var PodColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
	{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic."},
	{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod."},
	{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
	{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
	{Name: "IP", Type: "string", Priority: 1, Description: "podIP address allocated to the pod."},
	{Name: "Node", Type: "string", Priority: 1, Description: "NodeName indicates in which node this pod is scheduled."},
	{Name: "Nominated Node", Type: "string", Priority: 1, Description: "nominatedNodeName is set only when this pod preempts other pods on the node."},
	{Name: "Readiness Gates", Type: "string", Priority: 1, Description: "If specified, all readiness gates will be evaluated for pod readiness."},
}

// Age is kubectl's age: "<unknown>" for no time.
func Age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func isRestartableInit(c *v1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// PodCells are the cells of kubectl's printPod (pkg/printers/
// internalversion): NAME READY STATUS RESTARTS AGE, then the wide IP NODE
// NOMINATED NODE READINESS GATES.
func PodCells(o runtime.Object, now time.Time) ([]any, []metav1.TableRowCondition) {
	pod := o.(*v1.Pod)
	restarts, sidecarRestarts := 0, 0
	total := len(pod.Spec.Containers)
	ready := 0
	var lastRestart, lastSidecarRestart metav1.Time
	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Reason == v1.PodReasonSchedulingGated {
			reason = v1.PodReasonSchedulingGated
		}
	}
	var conds []metav1.TableRowCondition
	switch pod.Status.Phase {
	case v1.PodSucceeded:
		conds = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(pod.Status.Phase), Message: "The pod has completed successfully."}}
	case v1.PodFailed:
		conds = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(pod.Status.Phase), Message: "The pod failed."}}
	}
	inits := map[string]*v1.Container{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		inits[c.Name] = c
		if isRestartableInit(c) {
			total++
		}
	}
	later := func(last *metav1.Time, st v1.ContainerStatus) {
		if t := st.LastTerminationState.Terminated; t != nil && last.Before(&t.FinishedAt) {
			*last = t.FinishedAt
		}
	}
	initializing := false
	for i, c := range pod.Status.InitContainerStatuses {
		restarts += int(c.RestartCount)
		later(&lastRestart, c)
		if isRestartableInit(inits[c.Name]) {
			sidecarRestarts += int(c.RestartCount)
			later(&lastSidecarRestart, c)
		}
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case isRestartableInit(inits[c.Name]) && c.Started != nil && *c.Started:
			if c.Ready {
				ready++
			}
			continue
		case c.State.Terminated != nil:
			switch t := c.State.Terminated; {
			case t.Reason != "":
				reason = "Init:" + t.Reason
			case t.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + c.State.Waiting.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}
	if !initializing || podInitialized(pod) {
		restarts, lastRestart = sidecarRestarts, lastSidecarRestart
		running := false
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			c := pod.Status.ContainerStatuses[i]
			restarts += int(c.RestartCount)
			later(&lastRestart, c)
			switch {
			case c.State.Waiting != nil && c.State.Waiting.Reason != "":
				reason = c.State.Waiting.Reason
			case c.State.Terminated != nil && c.State.Terminated.Reason != "":
				reason = c.State.Terminated.Reason
			case c.State.Terminated != nil && c.State.Terminated.Signal != 0:
				reason = fmt.Sprintf("Signal:%d", c.State.Terminated.Signal)
			case c.State.Terminated != nil:
				reason = fmt.Sprintf("ExitCode:%d", c.State.Terminated.ExitCode)
			case c.Ready && c.State.Running != nil:
				running = true
				ready++
			}
		}
		if reason == "Completed" && running {
			reason = "NotReady"
			if podReady(pod) {
				reason = "Running"
			}
		}
	}
	if pod.DeletionTimestamp != nil && pod.Status.Reason == "NodeLost" {
		reason = "Unknown"
	} else if pod.DeletionTimestamp != nil && pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed {
		reason = "Terminating"
	}
	restartsStr := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartsStr = fmt.Sprintf("%d (%s ago)", restarts, Age(lastRestart, now))
	}
	ip, node, nominated := "<none>", "<none>", "<none>"
	if len(pod.Status.PodIPs) > 0 && pod.Status.PodIPs[0].IP != "" {
		ip = pod.Status.PodIPs[0].IP
	} else if pod.Status.PodIP != "" {
		ip = pod.Status.PodIP
	}
	if pod.Spec.NodeName != "" {
		node = pod.Spec.NodeName
	}
	if pod.Status.NominatedNodeName != "" {
		nominated = pod.Status.NominatedNodeName
	}
	gates := "<none>"
	if len(pod.Spec.ReadinessGates) > 0 {
		n := 0
		for _, g := range pod.Spec.ReadinessGates {
			for _, c := range pod.Status.Conditions {
				if c.Type == g.ConditionType {
					if c.Status == v1.ConditionTrue {
						n++
					}
					break
				}
			}
		}
		gates = fmt.Sprintf("%d/%d", n, len(pod.Spec.ReadinessGates))
	}
	return []any{pod.Name, fmt.Sprintf("%d/%d", ready, total), reason, restartsStr,
		Age(pod.CreationTimestamp, now), ip, node, nominated, gates}, conds
}

func podInitialized(pod *v1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodInitialized && c.Status == v1.ConditionTrue {
			return true
		}
	}
	return false
}

func podReady(pod *v1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodReady && c.Status == v1.ConditionTrue {
			return true
		}
	}
	return false
}
