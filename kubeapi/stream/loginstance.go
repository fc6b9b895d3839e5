package stream

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/berth-dev/berth/model"
)

// LogInstance returns the instance of container name whose log pods/log
// reads, chosen as the kubelet chooses it: from the container's status as
// p serves it (validateContainerLogStatus), not from the engine's list.
// previous reads lastState.terminated; otherwise a running container's
// current instance, a terminated one's (or, when it never got one, its
// last terminated), a waiting one's that its status still names (it runs
// while the pod's sandbox is replaced), else the last terminated one: a
// container waiting in CrashLoopBackOff prints the run that crashed, for
// both. ctrs are the
// containers of p's incarnation; an instance the status names that is not
// among them (collected since) is a BadRequest, as every refusal here.
func LogInstance(p *model.Pod, ctrs []*model.Container, name string, previous bool) (*model.Container, error) {
	cs := statusOf(p, name)
	if cs == nil {
		// Not computed yet: berth writes a new pod's status after its
		// first reconcile, where the kubelet has published its waiting
		// state.
		return nil, waitingError(p, name)
	}
	podName := p.Spec.Name
	last := cs.LastTerminationState.Terminated
	var id string
	switch st := cs.State; {
	case previous:
		if last == nil || last.ContainerID == "" {
			return nil, badRequest("previous terminated container %q in pod %q not found", name, podName)
		}
		id = last.ContainerID
	case st.Running != nil:
		id = cs.ContainerID
	case st.Terminated != nil:
		id = st.Terminated.ContainerID
		if id == "" && last != nil {
			id = last.ContainerID
		}
		if id == "" {
			return nil, badRequest("container %q in pod %q is terminated", name, podName)
		}
	case st.Waiting != nil && cs.ContainerID != "":
		// An instance that still runs while its pod's sandbox is replaced
		// (or the one that crashed, as lastState names it).
		id = cs.ContainerID
	case last != nil:
		if last.ContainerID == "" {
			return nil, badRequest("container %q in pod %q is terminated", name, podName)
		}
		id = last.ContainerID
	case st.Waiting != nil:
		switch reason := st.Waiting.Reason; reason {
		case "ErrImagePull":
			return nil, badRequest("container %q in pod %q is waiting to start: image can't be pulled", name, podName)
		case "ImagePullBackOff":
			return nil, badRequest("container %q in pod %q is waiting to start: trying and failing to pull image", name, podName)
		default:
			return nil, badRequest("container %q in pod %q is waiting to start: %s", name, podName, reason)
		}
	default:
		return nil, badRequest("container %q in pod %q is waiting to start - no logs yet", name, podName)
	}
	// "docker://<id>": the runtime's scheme, then the engine's ID.
	if _, rest, ok := strings.Cut(id, "://"); ok {
		id = rest
	}
	for _, c := range ctrs {
		if c.ID == id && c.Name == name {
			return c, nil
		}
	}
	return nil, badRequest("container %q in pod %q: its instance %s is no longer on the node", name, podName, shortID(id))
}

// statusOf is the status of container (or init container) name that p
// serves, nil when it has none yet.
func statusOf(p *model.Pod, name string) *v1.ContainerStatus {
	for _, list := range [][]v1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

func badRequest(format string, args ...any) error {
	return apierrors.NewBadRequest(fmt.Sprintf(format, args...))
}

// shortID is the first 12 characters of an engine ID, as docker ps shows it.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
