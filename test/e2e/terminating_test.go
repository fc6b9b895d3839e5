package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/berth-dev/berth/runtime"
)

// TestDeletedPodShowsTerminating: a pod whose manifest is removed is
// served with deletionTimestamp while its containers stop (a 3 s preStop
// hook), so client-go gets MODIFIED, berth get pods shows Terminating, and
// then DELETED, stamped too, once no container of it runs.
func TestDeletedPodShowsTerminating(t *testing.T) {
	b := startBerth(t, Options{})
	writeFile(t, b.Pods, "slowstop.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: slowstop
spec:
  terminationGracePeriodSeconds: 10
  containers:
    - name: app
      image: %q
      args: [sleep]
      lifecycle:
        preStop: {exec: {command: [/testapp, exit, "0", 3s]}}
`, testImage))
	waitPodRunning(t, b.Node, "slowstop", "app")
	pods := kubeClient(t, b, "").CoreV1().Pods("default")
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	var rv string
	waitFor(t, waitLong, "the API shows slowstop Running", func() (bool, string) {
		p, err := pods.Get(ctx, "slowstop", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		rv = p.ResourceVersion
		return p.Status.Phase == v1.PodRunning, string(p.Status.Phase)
	})
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, FieldSelector: "metadata.name=slowstop"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	removeFile(t, b.Pods, "slowstop.yaml")

	terminating := false
	for deleted := false; !deleted; {
		var ev watch.Event
		select {
		case ev = <-w.ResultChan():
		case <-ctx.Done():
			t.Fatalf("no DELETED event (Terminating seen: %t)", terminating)
		}
		p, ok := ev.Object.(*v1.Pod)
		if !ok {
			t.Fatalf("watch event %s %T", ev.Type, ev.Object)
		}
		switch {
		case ev.Type == watch.Modified && p.DeletionTimestamp != nil && !terminating:
			terminating = true
			if run := running(podContainers(t, b.Node, "slowstop")); len(run["app"]) == 0 {
				t.Errorf("served Terminating once its container stopped: %v", run)
			}
			out, errOut, err := berthCLI(t, "get", "pods", "slowstop", "--server", b.URL(""))
			if err != nil || !strings.Contains(out, "Terminating") {
				t.Errorf("berth get pods while the pod stops: %v %q\n%s", err, errOut, out)
			}
		case ev.Type == watch.Deleted:
			deleted = true
			if p.DeletionTimestamp == nil {
				t.Error("DELETED without deletionTimestamp")
			}
			// The engine's list may lag its die event; its inspect does not.
			for _, c := range podContainers(t, b.Node, "slowstop") {
				if in, err := cli().ContainerInspect(ctx, c.ID); err == nil && in.State.Running {
					t.Errorf("DELETED while container %s runs", c.Labels[runtime.LabelContainerName])
				}
			}
		}
	}
	if !terminating {
		t.Error("no MODIFIED event with deletionTimestamp before DELETED")
	}
}
