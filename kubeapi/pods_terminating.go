package kubeapi

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/model"
)

// terminating keeps serving a pod the store dropped while a container of
// it still runs (the controller stops them after the store forgot the
// pod): its last state with deletionTimestamp set to when the API first
// saw it gone, so kubectl shows it Terminating until its containers have
// stopped, and then DELETED.
//
// Misuse: its state is unguarded; only the pods snapshot, which runs
// under the tracker's lock, may call update.
type terminating struct {
	clock  clock.Clock
	served map[string]*model.Pod // the store's pods at the last update
	gone   map[string]*gonePod
}

// gonePod is a pod the store dropped, since at; the pointer is the
// rendering's ident.
type gonePod struct {
	p  *model.Pod
	at metav1.Time
}

func newTerminating(clk clock.Clock) *terminating {
	return &terminating{clock: clk, served: map[string]*model.Pod{}, gone: map[string]*gonePod{}}
}

// update records pods (the store's) and ctrs (the runtime's as stored)
// and returns the pods to serve as terminating, each with its time.
func (t *terminating) update(pods []*model.Pod, ctrs []*model.Container) []*gonePod {
	running := map[types.UID]bool{}
	for _, c := range ctrs {
		if c.Running() {
			running[types.UID(c.PodUID)] = true
		}
	}
	served := make(map[string]*model.Pod, len(pods))
	for _, p := range pods {
		served[p.Key] = p
	}
	for key, p := range t.served {
		if served[key] == nil && t.gone[key] == nil && running[p.Spec.UID] {
			t.gone[key] = &gonePod{p: p, at: metav1.NewTime(t.clock.Now())}
		}
	}
	t.served = served
	out := make([]*gonePod, 0, len(t.gone))
	for key, g := range t.gone {
		if served[key] != nil || !running[g.p.Spec.UID] {
			delete(t.gone, key)
			continue
		}
		out = append(out, g)
	}
	return out
}
