package controller

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/prober"
	"github.com/berth-dev/berth/restarts"
)

func sidecar(name string) v1.Container {
	c := ctr(name, "app:1")
	c.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
	return c
}

// The kubelet's sidecar rules (KEP-753) as plans: start order, restarts by
// the sidecar's own policy, stop order, completion beside running sidecars.
func TestPlanSidecars(t *testing.T) {
	// Two sidecars, the second gated by a startup probe, then the app.
	sc := testPod("sc", ctr("app", "app:1"))
	gated := sidecar("s2")
	gated.StartupProbe = probe()
	sc.Spec.InitContainers = []v1.Container{sidecar("s1"), gated}
	never := sc.DeepCopy()
	never.Spec.RestartPolicy = v1.RestartPolicyNever
	onFailure := sc.DeepCopy()
	onFailure.Spec.RestartPolicy = v1.RestartPolicyOnFailure
	// A sidecar, then a regular init container, then the app.
	mixed := testPod("mixed", ctr("app", "app:1"))
	mixed.Spec.InitContainers = []v1.Container{sidecar("s1"), ctr("i2", "app:1")}
	edited := sc.DeepCopy()
	edited.Spec.InitContainers[0].Env = []v1.EnvVar{{Name: "X", Value: "2"}}

	running := func(p *v1.Pod, name string, attempt int) *model.Container {
		return row(p, name, attempt, model.StateRunning, 0)
	}
	exited := func(p *v1.Pod, name string, attempt, code int) *model.Container {
		return row(p, name, attempt, model.StateExited, code)
	}
	started := func(ids ...string) func(*PlanInput) {
		return func(in *PlanInput) {
			for _, id := range ids {
				in.Started[id] = true
			}
		}
	}
	up := func(p *v1.Pod) []*model.Container {
		return []*model.Container{running(p, "POD", 0), running(p, "s1", 0), running(p, "s2", 0), running(p, "app", 0)}
	}
	stale := func(c *model.Container) *model.Container {
		c.Hash = "old"
		return c
	}

	for _, tc := range []struct {
		name string
		in   PlanInput
		edit func(*PlanInput)
		want string
	}{
		{name: "start order: the first sidecar alone",
			in: input(sc), want: "create POD-0; run s1-0 restarts=0"},
		{name: "start order: the next once the first runs (no startup probe)",
			in: input(sc, running(sc, "POD", 0), running(sc, "s1", 0)), want: "run s2-0 restarts=0"},
		{name: "start order: a sidecar with a startup probe holds the app until it passed",
			in: input(sc, running(sc, "POD", 0), running(sc, "s1", 0), running(sc, "s2", 0)), want: ""},
		{name: "start order: the app once the startup probe passed, the sidecars keep running",
			in:   input(sc, running(sc, "POD", 0), running(sc, "s1", 0), running(sc, "s2", 0)),
			edit: started("s2-0"), want: "run app-0 restarts=0"},
		{name: "a failed startup probe restarts the sidecar",
			in:   input(sc, running(sc, "POD", 0), running(sc, "s1", 0), running(sc, "s2", 0)),
			edit: func(in *PlanInput) { in.Unhealthy["s2-0"] = prober.Startup }, want: "stop s2-0 @1"},
		{name: "a regular init container after a sidecar: it runs once the sidecar runs",
			in: input(mixed, running(mixed, "POD", 0), running(mixed, "s1", 0)), want: "run i2-0 restarts=0"},
		{name: "a regular init container after a sidecar: the app once it succeeded",
			in: input(mixed, running(mixed, "POD", 0), running(mixed, "s1", 0), exited(mixed, "i2", 0, 0)), want: "run app-0 restarts=0"},
		{name: "a sidecar that crashed while a later init container runs: restarted, nothing waits for it",
			in: input(mixed, running(mixed, "POD", 0), exited(mixed, "s1", 0, 1), running(mixed, "i2", 0)), want: "run s1-1 restarts=1"},
		{name: "crashed sidecar after the init phase: restarted",
			in:   input(sc, running(sc, "POD", 0), exited(sc, "s1", 0, 1), running(sc, "s2", 0), running(sc, "app", 0)),
			edit: started("s2-0"), want: "run s1-1 restarts=1"},
		{name: "crashed sidecar of a Never pod: restarted all the same",
			in:   input(never, running(never, "POD", 0), exited(never, "s1", 0, 1), running(never, "s2", 0), running(never, "app", 0)),
			edit: started("s2-0"), want: "run s1-1 restarts=1"},
		{name: "sidecar that exited 0 in an OnFailure pod: restarted",
			in:   input(onFailure, running(onFailure, "POD", 0), exited(onFailure, "s1", 0, 0), running(onFailure, "s2", 0), running(onFailure, "app", 0)),
			edit: started("s2-0"), want: "run s1-1 restarts=1"},
		{name: "crash-looping sidecar: waits out its backoff",
			in: input(sc, running(sc, "POD", 0), exited(sc, "s1", 0, 1), running(sc, "s2", 0), running(sc, "app", 0)),
			edit: func(in *PlanInput) {
				in.Backoff.Crash["s1"] = restarts.CrashState{Restarted: true, Delay: 10 * time.Second}
			}, want: "requeue 9s; wait s1 CrashLoopBackOff"},
		{name: "liveness failure of a sidecar: it alone is stopped",
			in: input(sc, up(sc)...), edit: func(in *PlanInput) { in.Unhealthy["s1-0"] = prober.Liveness }, want: "stop s1-0 @1"},
		{name: "edited sidecar: stopped alone, then replaced alone",
			in:   input(edited, running(edited, "POD", 0), stale(running(edited, "s1", 0)), running(edited, "s2", 0), running(edited, "app", 0)),
			edit: started("s2-0"), want: "stop s1-0 @1"},
		{name: "edited sidecar once stopped: a new instance",
			in:   input(edited, running(edited, "POD", 0), stale(exited(edited, "s1", 0, 143)), running(edited, "s2", 0), running(edited, "app", 0)),
			edit: started("s2-0"), want: "remove s1-0 @1; run s1-1 restarts=0"},
		{name: "deleted pod: the app first, then the sidecars in reverse order, then the sandbox",
			in:   input(nil, up(sc)...),
			want: "forget 01234567-89ab-cdef-0000-sc; remove POD-0; remove app-0; remove s1-0 @2; remove s2-0 @1"},
		{name: "Never pod whose app completed: finished while its sidecars run, they stop in reverse order",
			in:   input(never, running(never, "POD", 0), running(never, "s1", 0), running(never, "s2", 0), exited(never, "app", 0, 0)),
			edit: started("s2-0"), want: "finished; stop POD-0; stop s1-0 @2; stop s2-0 @1"},
		{name: "OnFailure pod whose app succeeded: finished, the sidecars stop",
			in:   input(onFailure, running(onFailure, "POD", 0), running(onFailure, "s1", 0), running(onFailure, "s2", 0), exited(onFailure, "app", 0, 0)),
			edit: started("s2-0"), want: "finished; stop POD-0; stop s1-0 @2; stop s2-0 @1"},
		{name: "Never pod, sidecars stopped by SIGTERM: finished, not a failed init",
			in:   input(never, exited(never, "POD", 0, 0), exited(never, "s1", 0, 143), exited(never, "s2", 0, 143), exited(never, "app", 0, 0)),
			want: "finished"},
		{name: "Always pod whose app exited: the app restarts, the sidecars run on",
			in:   input(sc, running(sc, "POD", 0), running(sc, "s1", 0), running(sc, "s2", 0), exited(sc, "app", 0, 0)),
			edit: started("s2-0"), want: "run app-1 restarts=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.edit != nil {
				tc.edit(&tc.in)
			}
			if got := describe(plan(tc.in)); got != tc.want {
				t.Errorf("plan:\n got  %q\n want %q", got, tc.want)
			}
		})
	}
}
