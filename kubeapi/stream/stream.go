// Package stream serves the streaming subresources of pods as the kubelet
// does: logs, exec, attach (WebSocket channel protocols or SPDY) and
// port-forward (SPDY, plain or tunneled in WebSocket). It builds handlers
// only; kubeapi mounts them with their access levels.
package stream

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

// Runtime is what the streaming subresources run on (runtime.Runtime
// satisfies it).
type Runtime interface {
	Logs(ctx context.Context, id string, opts runtime.LogOptions) (io.ReadCloser, error)
	ExecStream(ctx context.Context, id string, o runtime.ExecOptions) (int, error)
}

// DefaultContainerAnnotation names the container kubectl (and berth) pick
// when a request names none.
const DefaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

// streamIdleTimeout ends an exec or port-forward connection that carried
// nothing for this long (the kubelet's default).
const streamIdleTimeout = 4 * time.Hour

// streamCreationTimeout bounds how long a SPDY client takes to open the
// streams of an exec (the kubelet's default).
const streamCreationTimeout = 30 * time.Second

// Options are what the streams read pods from.
type Options struct {
	// Store holds the pods and their containers.
	Store *store.Store
	// Visible reports whether the request may see p; a pod it hides is a
	// 404 (nil: every pod is visible).
	Visible func(r *http.Request, p *model.Pod) bool
	// Clock is the clock of logs' sinceSeconds (nil: the real one).
	Clock clock.Clock
}

// Route is one streaming subresource: Pattern is an http.ServeMux pattern
// with its method. Exec marks exec, attach and port-forward, which the
// server must grant to admin tokens only; the others (logs) are reads.
type Route struct {
	Pattern string
	Exec    bool
	Handler http.HandlerFunc
}

// Routes returns pods/log, pods/exec, pods/portforward and, when rt is an
// Attacher, pods/attach, running on rt.
func Routes(o Options, rt Runtime) []Route {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Visible == nil {
		o.Visible = func(*http.Request, *model.Pod) bool { return true }
	}
	s := &streams{o: o, rt: rt, dial: (&net.Dialer{Timeout: 5 * time.Second}).DialContext}
	routes := []Route{{Pattern: "GET /api/v1/namespaces/{ns}/pods/{name}/log", Handler: s.serveLog}}
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		routes = append(routes,
			Route{Pattern: m + " /api/v1/namespaces/{ns}/pods/{name}/exec", Exec: true, Handler: s.serveExec},
			Route{Pattern: m + " /api/v1/namespaces/{ns}/pods/{name}/portforward", Exec: true, Handler: s.servePortForward})
		if at, ok := rt.(Attacher); ok {
			routes = append(routes, Route{Pattern: m + " /api/v1/namespaces/{ns}/pods/{name}/attach", Exec: true, Handler: s.serveAttach(at)})
		}
	}
	return routes
}

type streams struct {
	o    Options
	rt   Runtime
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// pod returns the pod of the request's path, or NotFound when it is
// absent or not visible to the request's token.
func (s *streams) pod(r *http.Request) (*model.Pod, error) {
	name := r.PathValue("name")
	p, err := s.o.Store.Pod(nil, r.PathValue("ns")+"/"+name)
	if err != nil {
		return nil, err
	}
	if p == nil || p.Spec == nil || !s.o.Visible(r, p) {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
	}
	return p, nil
}

// DefaultContainer is the container kubectl picks when none is named: the
// one the default-container annotation names if the pod has it, else the
// first. "" for a pod without containers.
func DefaultContainer(p *v1.Pod) string {
	if n := p.Annotations[DefaultContainerAnnotation]; n != "" {
		for _, c := range p.Spec.Containers {
			if c.Name == n {
				return n
			}
		}
	}
	if len(p.Spec.Containers) == 0 {
		return ""
	}
	return p.Spec.Containers[0].Name
}

// containerOf returns name, or the default container when name is "",
// after checking that the pod has it (containers and init containers):
// BadRequest otherwise, as the apiserver answers.
func containerOf(p *v1.Pod, name string) (string, error) {
	if name == "" {
		name = DefaultContainer(p)
	}
	for _, cs := range [][]v1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for _, c := range cs {
			if c.Name == name {
				return name, nil
			}
		}
	}
	if name == "" {
		return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s", p.Name))
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, p.Name))
}

// podContainers returns the containers of p's incarnation (IncarnationOf
// the store's containers of p's key).
func (s *streams) podContainers(p *model.Pod) ([]*model.Container, error) {
	ctrs, err := s.o.Store.ContainersByPod(nil, p.Key)
	if err != nil {
		return nil, err
	}
	return IncarnationOf(ctrs, p), nil
}

// IncarnationOf returns those of ctrs (the containers of p's key) that
// belong to p itself: labelled with p's UID and source. A removed pod's
// containers stop under its key after another pod, of any source, took
// it; no stream of the new pod may reach them, as the kubelet finds a
// pod's containers by its UID.
func IncarnationOf(ctrs []*model.Container, p *model.Pod) []*model.Container {
	var out []*model.Container
	for _, c := range ctrs {
		if c.PodUID == string(p.Spec.UID) && c.Source == p.Source {
			out = append(out, c)
		}
	}
	return out
}

// Instances returns the instances of container name among ctrs (one
// pod's), newest attempt first: [0] is the current one, [1] the previous.
func Instances(ctrs []*model.Container, name string) []*model.Container {
	var out []*model.Container
	for _, c := range ctrs {
		if c.Name == name {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Attempt > out[j].Attempt })
	return out
}

// RunningInstance returns the running one of a container's instances
// (Instances' result), nil when none runs.
func RunningInstance(inst []*model.Container) *model.Container {
	for _, c := range inst {
		if c.State == model.StateRunning {
			return c
		}
	}
	return nil
}

// waitingError is the kubelet's answer for a container with no instance yet.
func waitingError(p *model.Pod, name string) error {
	reason := "ContainerCreating"
	for _, cs := range append(append([]v1.ContainerStatus{}, p.Status.ContainerStatuses...), p.Status.InitContainerStatuses...) {
		if cs.Name == name && cs.State.Waiting != nil && cs.State.Waiting.Reason != "" {
			reason = cs.State.Waiting.Reason
		}
	}
	return apierrors.NewBadRequest(fmt.Sprintf("container %q in pod %q is waiting to start: %s", name, p.Spec.Name, reason))
}

// queryBool parses a boolean query parameter ("" and absent are false).
func queryBool(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	switch v {
	case "1", "true", "True", "TRUE":
		return true, nil
	case "0", "false", "False", "FALSE":
		return false, nil
	}
	return false, apierrors.NewBadRequest(fmt.Sprintf("query parameter %s: %q is not a boolean", name, v))
}
