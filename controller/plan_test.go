package controller

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podconfig"
	"github.com/berth-dev/berth/prober"
	"github.com/berth-dev/berth/restarts"
	"github.com/berth-dev/berth/runtime"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// row is an observed container of pod p: name, attempt, state, exit code;
// labelled as podconfig labels it.
func row(p *v1.Pod, name string, attempt int, state string, exit int) *model.Container {
	hash := podconfig.SandboxHash(p)
	labels := map[string]string{runtime.LabelSandbox: "POD-0"}
	for _, list := range [][]v1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				hash = podconfig.ContainerHash(p, &list[i])
			}
		}
	}
	for i := range p.Spec.InitContainers {
		if p.Spec.InitContainers[i].Name == name && model.IsSidecar(&p.Spec.InitContainers[i]) {
			labels[runtime.LabelSidecar] = fmt.Sprint(i)
		}
	}
	c := &model.Container{
		ID: fmt.Sprintf("%s-%d", name, attempt), PodKey: p.Namespace + "/" + p.Name, PodUID: string(p.UID),
		Name: name, Hash: hash, Source: "file", Attempt: attempt, State: state, ExitCode: exit,
		StartedAt: now.Add(-time.Minute), CreatedAt: now.Add(-time.Minute + time.Duration(attempt)*time.Second),
		Labels: labels,
	}
	if state == model.StateExited {
		c.FinishedAt = now.Add(-time.Second)
	}
	if name == model.SandboxName {
		c.IP = "172.17.0.2"
	}
	return c
}

func input(p *v1.Pod, ctrs ...*model.Container) PlanInput {
	key := "default/web"
	if p != nil {
		key = "default/" + p.Name
	}
	in := PlanInput{Key: key, Containers: ctrs, Now: now, Synced: map[string]bool{"file": true},
		Unhealthy: map[string]prober.Kind{}, Started: map[string]bool{},
		Backoff: Backoffs{Policy: restarts.Backoff{Initial: 10 * time.Second, Max: 40 * time.Second, Reset: 10 * time.Minute},
			Crash: map[string]restarts.CrashState{}, StartRetry: map[string]time.Time{}, Pulls: map[string]PullState{}}}
	if p != nil {
		in.Pod = &model.Pod{Key: in.Key, Source: "file", Spec: p}
	}
	return in
}

// describe renders a plan as sorted lines, for comparison with a table; a
// kill after others shows its Order ("@2").
func describe(pl Plan) string {
	var out []string
	for _, k := range pl.Kill {
		verb := "stop"
		if k.Remove {
			verb = "remove"
		}
		line := verb + " " + k.Container.ID
		if k.Order > 0 {
			line += fmt.Sprintf(" @%d", k.Order)
		}
		out = append(out, line)
	}
	if pl.CreateSandbox != nil {
		out = append(out, fmt.Sprintf("create POD-%d", *pl.CreateSandbox))
	}
	if pl.StartSandbox != nil {
		out = append(out, "start "+pl.StartSandbox.ID)
	}
	for _, s := range pl.Start {
		switch {
		case s.Existing != nil:
			out = append(out, "start "+s.Existing.ID)
		default:
			out = append(out, fmt.Sprintf("run %s-%d restarts=%d", s.Spec.Name, s.Attempt, s.RestartCount))
		}
	}
	for n, w := range pl.Waiting {
		out = append(out, "wait "+n+" "+w.Reason)
	}
	if pl.RequeueAfter > 0 {
		out = append(out, "requeue "+pl.RequeueAfter.String())
	}
	if pl.FailedInit {
		out = append(out, "failed-init")
	}
	if pl.Finished {
		out = append(out, "finished")
	}
	if pl.DeadlineExceeded {
		out = append(out, "deadline-exceeded")
	}
	if len(pl.Forget) > 0 {
		out = append(out, "forget "+strings.Join(pl.Forget, ","))
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

func TestPlan(t *testing.T) {
	web := testPod("web", ctr("a", "app:1"), ctr("b", "app:1"))
	edited := web.DeepCopy()
	edited.Spec.Containers[0].Env = []v1.EnvVar{{Name: "X", Value: "2"}}
	ported := web.DeepCopy()
	ported.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolTCP}}
	never := testPod("job", ctr("a", "app:1"))
	never.Spec.RestartPolicy = v1.RestartPolicyNever
	onFailure := testPod("job", ctr("a", "app:1"))
	onFailure.Spec.RestartPolicy = v1.RestartPolicyOnFailure
	inits := testPod("init", ctr("app", "app:1"))
	inits.Spec.InitContainers = []v1.Container{ctr("i1", "app:1"), ctr("i2", "app:1")}
	initsNever := inits.DeepCopy()
	initsNever.Spec.RestartPolicy = v1.RestartPolicyNever
	replaced := web.DeepCopy()
	replaced.UID = "01234567-89ab-cdef-0000-replaced"
	deadline := web.DeepCopy()
	secs := int64(60)
	deadline.Spec.ActiveDeadlineSeconds = &secs
	neverEdited := never.DeepCopy()
	neverEdited.Spec.Containers[0].Env = []v1.EnvVar{{Name: "X", Value: "2"}}
	ended := func(phase v1.PodPhase, p *v1.Pod) func(*PlanInput) {
		return func(in *PlanInput) { in.Pod.Terminal, in.Pod.TerminalSpec = phase, specHash(p) }
	}
	seen := func(ago time.Duration) func(*PlanInput) {
		return func(in *PlanInput) { in.Pod.SeenAt = now.Add(-ago) }
	}

	running := func(p *v1.Pod, name string, attempt int) *model.Container {
		return row(p, name, attempt, model.StateRunning, 0)
	}
	exited := func(p *v1.Pod, name string, attempt, code int) *model.Container {
		return row(p, name, attempt, model.StateExited, code)
	}
	stale := func(p *v1.Pod, c *model.Container) *model.Container {
		c.Hash = "old"
		return c
	}

	for _, tc := range []struct {
		name string
		in   PlanInput
		edit func(*PlanInput)
		want string
	}{
		{name: "new pod: sandbox and every container in one pass",
			in: input(web), want: "create POD-0; run a-0 restarts=0; run b-0 restarts=0"},
		{name: "running as declared: nothing",
			in: input(web, running(web, "POD", 0), running(web, "a", 0), running(web, "b", 0)), want: ""},
		{name: "edited running container: stopped first",
			in: input(edited, running(edited, "POD", 0), stale(edited, running(edited, "a", 0)), running(edited, "b", 0)), want: "stop a-0"},
		{name: "edited container once stopped: replaced",
			in: input(edited, running(edited, "POD", 0), stale(edited, exited(edited, "a", 0, 143)), running(edited, "b", 0)), want: "remove a-0; run a-1 restarts=0"},
		{name: "port edit: the whole pod goes first",
			in:   input(ported, stale(ported, running(ported, "POD", 0)), running(ported, "a", 0), running(ported, "b", 0)),
			want: "remove POD-0; remove a-0; remove b-0"},
		{name: "liveness failure: stopped for a restart",
			in:   input(web, running(web, "POD", 0), running(web, "a", 0), running(web, "b", 0)),
			edit: func(in *PlanInput) { in.Unhealthy["a-0"] = prober.Liveness }, want: "stop a-0"},
		{name: "first crash: restarted at once, count grows",
			in: input(web, running(web, "POD", 0), exited(web, "a", 0, 1), running(web, "b", 0)), want: "run a-1 restarts=1"},
		{name: "crash loop: waits out the backoff",
			in: input(web, running(web, "POD", 0), exited(web, "a", 0, 1), running(web, "b", 0)),
			edit: func(in *PlanInput) {
				in.Backoff.Crash["a"] = restarts.CrashState{Restarted: true, Delay: 10 * time.Second}
			},
			want: "requeue 9s; wait a CrashLoopBackOff"},
		{name: "crash loop: restarted once the backoff elapsed",
			in: input(web, running(web, "POD", 0), exited(web, "a", 0, 1), running(web, "b", 0)),
			edit: func(in *PlanInput) {
				in.Backoff.Crash["a"] = restarts.CrashState{Restarted: true, Delay: 10 * time.Second}
				in.Now = now.Add(9 * time.Second)
			}, want: "run a-1 restarts=1"},
		{name: "Never: an exited container stays, the finished pod's sandbox stops",
			in: input(never, running(never, "POD", 0), exited(never, "a", 0, 2)), want: "finished; stop POD-0"},
		{name: "OnFailure: a success stays, the finished pod's sandbox stops",
			in: input(onFailure, running(onFailure, "POD", 0), exited(onFailure, "a", 0, 0)), want: "finished; stop POD-0"},
		{name: "dead sandbox: it goes, running containers stop (kept)",
			in: input(web, exited(web, "POD", 0, 137), running(web, "a", 0), running(web, "b", 0)), want: "remove POD-0; stop a-0; stop b-0"},
		{name: "dead sandbox, containers stopped: a new sandbox, restarts by policy",
			in:   input(web, exited(web, "POD", 0, 137), exited(web, "a", 0, 137), exited(web, "b", 0, 137)),
			want: "create POD-1; remove POD-0; run a-1 restarts=1; run b-1 restarts=1"},
		{name: "dead sandbox of a Never pod that ran: finished, no new sandbox, the old one kept",
			in: input(never, exited(never, "POD", 0, 137), exited(never, "a", 0, 137)), want: "finished"},
		{name: "finished pod, its sandbox stopped: nothing, no new sandbox",
			in: input(never, exited(never, "POD", 0, 0), exited(never, "a", 0, 0)), want: "finished"},
		{name: "dead sandbox of an OnFailure pod that succeeded: finished, no new sandbox",
			in: input(onFailure, exited(onFailure, "POD", 0, 137), exited(onFailure, "a", 0, 0)), want: "finished"},
		{name: "dead sandbox of an OnFailure pod that failed: a new sandbox",
			in:   input(onFailure, exited(onFailure, "POD", 0, 137), exited(onFailure, "a", 0, 1)),
			want: "create POD-1; remove POD-0; run a-1 restarts=1"},
		{name: "recorded terminal phase: nothing runs again, even with its containers gone",
			in: input(never), edit: ended(v1.PodSucceeded, never), want: "finished"},
		{name: "recorded terminal phase, Always pod: what runs is stopped, nothing restarts",
			in:   input(web, running(web, "POD", 0), exited(web, "a", 0, 1), running(web, "b", 0)),
			edit: ended(v1.PodFailed, web), want: "finished; stop POD-0; stop b-0"},
		{name: "terminal phase of an older spec: the edited pod runs again",
			in:   input(neverEdited, exited(neverEdited, "POD", 0, 0), stale(neverEdited, exited(neverEdited, "a", 0, 0))),
			edit: ended(v1.PodSucceeded, never), want: "create POD-1; remove POD-0; remove a-0; run a-1 restarts=0"},
		{name: "activeDeadlineSeconds not reached: requeued at the deadline",
			in:   input(deadline, running(deadline, "POD", 0), running(deadline, "a", 0), running(deadline, "b", 0)),
			edit: seen(20 * time.Second), want: "requeue 40s"},
		{name: "activeDeadlineSeconds reached: everything stops, the pod ended",
			in:   input(deadline, running(deadline, "POD", 0), running(deadline, "a", 0), exited(deadline, "b", 0, 1)),
			edit: seen(60 * time.Second), want: "deadline-exceeded; finished; stop POD-0; stop a-0"},
		{name: "activeDeadlineSeconds of an ended pod: nothing",
			in: input(deadline, exited(deadline, "POD", 0, 0), exited(deadline, "a", 0, 0), exited(deadline, "b", 0, 0)),
			edit: func(in *PlanInput) {
				seen(time.Hour)(in)
				ended(v1.PodFailed, deadline)(in)
			}, want: "finished"},
		{name: "sandbox failed to start: backs off",
			in:   input(web, row(web, "POD", 0, model.StateCreated, 128)),
			edit: func(in *PlanInput) { in.Backoff.StartRetry["POD"] = now.Add(5 * time.Second) }, want: "requeue 5s"},
		{name: "created sandbox past its backoff: started, then the containers",
			in: input(web, row(web, "POD", 0, model.StateCreated, 0)), want: "run a-0 restarts=0; run b-0 restarts=0; start POD-0"},
		{name: "container failed to start: RunContainerError until the backoff ends",
			in:   input(web, running(web, "POD", 0), row(web, "a", 0, model.StateCreated, 127), running(web, "b", 0)),
			edit: func(in *PlanInput) { in.Backoff.StartRetry["a"] = now.Add(20 * time.Second) }, want: "requeue 20s; wait a RunContainerError"},
		{name: "image pull in flight: ContainerCreating",
			in:   input(web, running(web, "POD", 0), running(web, "b", 0)),
			edit: func(in *PlanInput) { in.Backoff.Pulls["a"] = PullState{Pulling: true} }, want: "wait a ContainerCreating"},
		{name: "failed pull, first shown: ErrImagePull",
			in: input(web, running(web, "POD", 0), running(web, "b", 0)),
			edit: func(in *PlanInput) {
				in.Backoff.Pulls["a"] = PullState{RetryAt: now.Add(10 * time.Second), Err: "no such host"}
			}, want: "requeue 10s; wait a ErrImagePull"},
		{name: "failed pull, shown before: ImagePullBackOff",
			in: input(web, running(web, "POD", 0), running(web, "b", 0)),
			edit: func(in *PlanInput) {
				in.Backoff.Pulls["a"] = PullState{RetryAt: now.Add(10 * time.Second), Err: "no such host", Reported: true}
			}, want: "requeue 10s; wait a ImagePullBackOff"},
		{name: "init containers: only the first runs",
			in: input(inits), want: "create POD-0; run i1-0 restarts=0"},
		{name: "init containers: the second after the first succeeded",
			in: input(inits, running(inits, "POD", 0), exited(inits, "i1", 0, 0)), want: "run i2-0 restarts=0"},
		{name: "init containers done: the app",
			in: input(inits, running(inits, "POD", 0), exited(inits, "i1", 0, 0), exited(inits, "i2", 0, 0)), want: "run app-0 restarts=0"},
		{name: "failed init container of a Never pod: the pod failed",
			in: input(initsNever, running(initsNever, "POD", 0), exited(initsNever, "i1", 0, 1)), want: "failed-init; finished; stop POD-0"},
		{name: "old instances: the previous is kept, older ones go",
			in:   input(web, running(web, "POD", 0), running(web, "a", 3), exited(web, "a", 2, 1), exited(web, "a", 1, 1), exited(web, "a", 0, 1), running(web, "b", 0)),
			want: "remove a-0; remove a-1"},
		{name: "a new instance created, not started yet: the previous exited one stays (logs -p)",
			in:   input(web, running(web, "POD", 0), row(web, "a", 2, model.StateCreated, 0), exited(web, "a", 1, 1), exited(web, "a", 0, 1), running(web, "b", 0)),
			want: "remove a-0; start a-2"},
		{name: "duplicate running instance: the older goes",
			in: input(web, running(web, "POD", 0), running(web, "a", 1), running(web, "a", 0), running(web, "b", 0)), want: "remove a-0"},
		{name: "container dropped from the spec: removed",
			in: input(web, running(web, "POD", 0), running(web, "a", 0), running(web, "b", 0), running(web, "gone", 0)), want: "remove gone-0"},
		{name: "deleted pod: everything goes, its state is forgotten",
			in:   input(nil, running(web, "POD", 0), running(web, "a", 0)),
			want: "forget 01234567-89ab-cdef-0000-web; remove POD-0; remove a-0"},
		{name: "deleted pod of a source not synced yet: kept",
			in:   input(nil, running(web, "POD", 0), running(web, "a", 0)),
			edit: func(in *PlanInput) { in.Synced["file"] = false }, want: ""},
		{name: "replaced incarnation: the old one goes before the new starts",
			in:   input(replaced, running(web, "POD", 0), running(web, "a", 0)),
			want: "forget 01234567-89ab-cdef-0000-web; remove POD-0; remove a-0"},
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

// The plan only reads its input.
func TestPlanDoesNotModifyItsInput(t *testing.T) {
	web := testPod("web", ctr("a", "app:1"))
	rows := []*model.Container{row(web, "POD", 0, model.StateExited, 137), row(web, "a", 0, model.StateRunning, 0)}
	before := make([]model.Container, len(rows))
	for i, r := range rows {
		before[i] = *r
	}
	_ = plan(input(web, rows...))
	for i, r := range rows {
		if fmt.Sprint(*r) != fmt.Sprint(before[i]) {
			t.Fatalf("plan modified %s", r.ID)
		}
	}
}
