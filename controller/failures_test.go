package controller

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

func TestFailedStartBacksOff(t *testing.T) {
	h := newHarness(t)
	h.rt.StartErr = func(cfg runtime.ContainerConfig) error {
		if cfg.Labels[runtime.LabelContainerName] == "a" {
			return errors.New(`exec: "/nonexistent": no such file or directory`)
		}
		return nil
	}
	h.put(testPod("web", ctr("a", "app:1")))
	res := h.settle("default/web")
	if creates := h.rt.CallCount("CreateContainer"); creates != 2 { // sandbox + one try of a
		t.Fatalf("%d creates, want 2: a failed start must back off, not loop", creates)
	}
	if res.RequeueAfter != 10*time.Second {
		t.Fatalf("requeue after %v, want 10s", res.RequeueAfter)
	}
	p, _ := h.st.Pod(nil, "default/web")
	if w := p.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "RunContainerError" {
		t.Fatalf("state %+v", p.Status.ContainerStatuses[0].State)
	}
	h.clock.Step(10 * time.Second)
	res = h.settle("default/web")
	if res.RequeueAfter != 20*time.Second {
		t.Fatalf("second failure: requeue after %v, want 20s", res.RequeueAfter)
	}
	h.rt.StartErr = nil
	h.clock.Step(20 * time.Second)
	h.settle("default/web")
	if h.running("default/web")["a"] == nil {
		t.Fatal("not started once starts work again")
	}
}

func TestSandboxPortTakenBacksOff(t *testing.T) {
	h := newHarness(t)
	h.rt.StartErr = func(cfg runtime.ContainerConfig) error {
		if len(cfg.Ports) > 0 {
			return errors.New("bind: address already in use")
		}
		return nil
	}
	p := testPod("web", ctr("a", "app:1"))
	p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolTCP}}
	h.put(p)
	res := h.settle("default/web")
	if creates := h.rt.CallCount("CreateContainer"); creates != 1 || res.RequeueAfter != 10*time.Second {
		t.Fatalf("%d creates, requeue %v: the sandbox must back off", creates, res.RequeueAfter)
	}
}

func TestSandboxLossFollowsRestartPolicy(t *testing.T) {
	for _, tc := range []struct {
		policy     v1.RestartPolicy
		newSandbox bool
		phase      v1.PodPhase
	}{
		{v1.RestartPolicyAlways, true, v1.PodRunning},
		{v1.RestartPolicyOnFailure, true, v1.PodRunning},
		{v1.RestartPolicyNever, false, v1.PodFailed},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			h := newHarness(t)
			p := testPod("web", ctr("a", "app:1"))
			p.Spec.RestartPolicy = tc.policy
			h.put(p)
			h.settle("default/web")
			before := h.running("default/web")
			h.rt.Exit(before["POD"].ID, 137)
			h.ctrl.obs.refresh(context.Background(), before["POD"].ID)
			h.settle("default/web")
			after := h.running("default/web")
			if got := after["POD"] != nil; got != tc.newSandbox {
				t.Fatalf("new sandbox %v, want %v", got, tc.newSandbox)
			}
			if tc.newSandbox {
				if after["a"] == nil || after["a"].RestartCount != 1 || after["a"].Labels[runtime.LabelSandbox] != after["POD"].ID {
					t.Fatalf("app after sandbox loss: %+v", after["a"])
				}
			} else {
				// The killed container is kept, exited, for status and logs.
				old, err := h.rt.InspectContainer(context.Background(), before["a"].ID)
				if err != nil || old.State != model.StateExited {
					t.Fatalf("killed container %v %v", old, err)
				}
			}
			got, _ := h.st.Pod(nil, "default/web")
			if got.Status.Phase != tc.phase {
				t.Errorf("phase %s, want %s", got.Status.Phase, tc.phase)
			}
			if tc.policy == v1.RestartPolicyNever && !strings.Contains(got.Status.ContainerStatuses[0].State.String(), "Terminated") {
				t.Errorf("state %+v", got.Status.ContainerStatuses[0].State)
			}
		})
	}
}

func TestConfiguredPauseImageIsPulled(t *testing.T) {
	h := newHarness(t)
	cfg := h.ctrl.cfg
	cfg.PauseImage, cfg.PauseBuild = "registry.example/pause:3.9", nil
	h.ctrl = New(cfg, h.st, h.rt, nil)
	h.put(testPod("web", ctr("a", "app:1")))
	h.settle("default/web")
	if h.rt.CallCount("PullImage") != 1 || h.rt.CallCount("BuildImage") != 0 || h.running("default/web")["POD"] == nil {
		t.Fatalf("pulls %d builds %d", h.rt.CallCount("PullImage"), h.rt.CallCount("BuildImage"))
	}
}

func TestSlowTerminationDoesNotHoldWorkers(t *testing.T) {
	h := newHarness(t)
	h.put(testPod("old", ctr("a", "app:1")))
	h.settle("default/old")
	block := make(chan struct{})
	h.rt.StopBlock = block
	_ = h.st.DeletePod("default/old")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := h.ctrl.Reconcile(context.Background(), "default/old"); err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the reconcile waited for the graceful stop")
	}
	h.put(testPod("new", ctr("a", "app:1")))
	for i := 0; i < 3; i++ {
		if _, err := h.ctrl.Reconcile(context.Background(), "default/new"); err != nil {
			t.Fatal(err)
		}
	}
	if h.running("default/new")["a"] == nil {
		t.Fatal("another pod did not start during a termination")
	}
	if h.running("default/old")["a"] == nil {
		t.Fatal("terminated before its stop returned")
	}
	close(block)
	h.ctrl.ops.wait()
	if n := len(h.running("default/old")); n != 0 {
		t.Fatalf("%d containers of the deleted pod left", n)
	}
}
