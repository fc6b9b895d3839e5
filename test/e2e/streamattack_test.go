package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	//lint:ignore SA1019 client-go's SPDY dialers return this type
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/internal/testutil/kubestream"
	"github.com/berth-dev/berth/runtime"
)

// lingerSecret is what the trusted pod writes to its log.
const lingerSecret = "db password is hunter2"

// lingerYAML is the trusted file pod "linger": app reports its
// environment (the secret) to its log and sleeps, web serves "trusted-web";
// both take 30 s in a preStop hook, so they run on that long once the
// manifest is removed.
func lingerYAML() string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: linger
spec:
  terminationGracePeriodSeconds: 60
  containers:
    - name: app
      image: %[1]q
      args: [report, --sleep]
      env: [{name: WHO, value: trusted}, {name: SECRET, value: %[2]q}]
      lifecycle:
        preStop: {exec: {command: [/testapp, exit, "0", 30s]}}
    - name: web
      image: %[1]q
      args: [serve]
      env: [{name: MESSAGE, value: trusted-web}]
      ports: [{containerPort: 8080}]
      lifecycle:
        preStop: {exec: {command: [/testapp, exit, "0", 30s]}}
`, testImage, lingerSecret)
}

// TestStreamsFollowPodUID: a push client takes the name of a trusted pod
// whose manifest was just removed, while the trusted pod's containers still
// stop. Its pods/log and events must not show the trusted pod's log line
// or events, and the admin's exec and port-forward to that name must not
// reach the trusted pod's containers: streams follow the pod's UID and
// source, not its namespace/name.
func TestStreamsFollowPodUID(t *testing.T) {
	b, admin, push := startWithPush(t)
	ctx := context.Background()
	adminCS, pushCS := kubeClient(t, b, admin), kubeClient(t, b, push)
	adminCfg := &rest.Config{Host: b.URL(""), BearerToken: admin}

	writeFile(t, b.Pods, "linger.yaml", lingerYAML())
	old := waitPodRunning(t, b.Node, "linger", "app", "web")
	var oldUID types.UID
	waitFor(t, waitLong, "linger's secret in its log and its Started events", func() (bool, string) {
		p, err := adminCS.CoreV1().Pods("default").Get(ctx, "linger", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		oldUID = p.UID
		got, err := adminCS.CoreV1().Pods("default").GetLogs("linger", &v1.PodLogOptions{Container: "app"}).DoRaw(ctx)
		if err != nil || !strings.Contains(string(got), lingerSecret) {
			return false, fmt.Sprintf("log %q %v", got, err)
		}
		evs := kubePodEvents(t, adminCS.CoreV1().RESTClient(), "linger")
		started := 0
		for _, e := range evs {
			if e.Reason == "Started" {
				started++
			}
		}
		return started == 2, fmt.Sprintf("%d Started events", started)
	})
	oldEvents := map[string]bool{}
	for _, e := range kubePodEvents(t, adminCS.CoreV1().RESTClient(), "linger") {
		oldEvents[e.Name] = true
	}

	removeFile(t, b.Pods, "linger.yaml")
	pushed := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "linger"}, Spec: v1.PodSpec{Containers: []v1.Container{
		{Name: "app", Image: testImage, Args: []string{"sleep"}, Env: []v1.EnvVar{{Name: "WHO", Value: "pushed"}}},
		{Name: "web", Image: testImage, Args: []string{"serve"}, Env: []v1.EnvVar{{Name: "MESSAGE", Value: "pushed-web"}},
			Ports: []v1.ContainerPort{{ContainerPort: 8080}}},
	}}}
	var created *v1.Pod
	waitFor(t, waitLong, "the push client creates linger", func() (bool, string) {
		var err error
		created, err = pushCS.CoreV1().Pods("default").Create(ctx, pushed, metav1.CreateOptions{})
		return err == nil, errString(err)
	})
	if created.UID == oldUID {
		t.Fatalf("the pushed pod has the trusted pod's UID %s", oldUID)
	}
	// The trusted pod's containers stop for 30 s; every check below runs
	// in that window (checked at its end).
	window := time.Now()
	stillOld := func(what string) {
		t.Helper()
		if !inspect(t, old["app"]).State.Running || !inspect(t, old["web"]).State.Running {
			t.Fatalf("%s: the trusted pod's containers stopped before the check ended (%s after removal); the test proves nothing", what, time.Since(window))
		}
	}

	// The push client's logs of "its" pod.
	for _, o := range []v1.PodLogOptions{{Container: "app"}, {Container: "app", Previous: true}, {Container: "app", SinceSeconds: ptrTo(int64(3600))}, {}} {
		got, err := pushCS.CoreV1().Pods("default").GetLogs("linger", &o).DoRaw(ctx)
		if strings.Contains(string(got), lingerSecret) || (err != nil && strings.Contains(err.Error(), lingerSecret)) {
			t.Errorf("push client's logs %+v show the trusted pod's log: %q %v", o, got, err)
		}
	}
	// The admin's logs of the pod of that name now are the pushed pod's
	// too, on both APIs.
	if got, err := adminCS.CoreV1().Pods("default").GetLogs("linger", &v1.PodLogOptions{Container: "app"}).DoRaw(ctx); strings.Contains(string(got), lingerSecret) {
		t.Errorf("admin's pods/log of the pushed pod shows the trusted pod's log: %q %v", got, err)
	}
	if code, body := authDo(t, "GET", b.URL("/containerLogs/default/linger/app"), admin, ""); strings.Contains(body, lingerSecret) {
		t.Errorf("admin's /containerLogs of the pushed pod shows the trusted pod's log: %d %q", code, body)
	}
	// The push client's events of "its" pod.
	for _, e := range kubePodEvents(t, pushCS.CoreV1().RESTClient(), "linger") {
		if oldEvents[e.Name] || e.Reason == "Killing" || (e.InvolvedObject.UID != "" && e.InvolvedObject.UID != created.UID) {
			t.Errorf("push client sees an event of the trusted pod: %s %s %q (uid %s)", e.Name, e.Reason, e.Message, e.InvolvedObject.UID)
		}
	}
	// The admin's exec and attach into the pod of that name.
	for _, sub := range []string{"exec", "attach"} {
		q := url.Values{"container": {"app"}, "stdout": {"true"}, "stderr": {"true"}}
		if sub == "exec" {
			q["command"] = []string{"/testapp", "getenv", "WHO"}
		}
		u, _ := url.Parse(b.URL("/api/v1/namespaces/default/pods/linger/" + sub + "?" + q.Encode()))
		for name, ex := range kubestream.Executors(t, adminCfg, u) {
			out, err := streamOnce(ctx, ex)
			if strings.Contains(out, "trusted") || strings.Contains(out, lingerSecret) {
				t.Errorf("admin's %s (%s) into pushed linger reached the trusted pod's container: %q %v", sub, name, out, err)
			}
		}
	}
	// The admin's port-forward to the pod of that name.
	pfURL, _ := url.Parse(b.URL("/api/v1/namespaces/default/pods/linger/portforward"))
	for name, d := range kubestream.Dialers(t, adminCfg, pfURL) {
		if body, err := forwardGet(d, 8080, "/"); strings.Contains(body, "trusted-web") {
			t.Errorf("admin's port-forward (%s) to pushed linger reached the trusted pod: %q %v", name, body, err)
		}
	}
	stillOld("logs, events, exec, attach and port-forward")

	// Once the trusted pod is gone, the pushed pod runs and its streams
	// are its own.
	waitFor(t, 2*waitLong, "the pushed linger running in the API", func() (bool, string) {
		p, err := pushCS.CoreV1().Pods("default").Get(ctx, "linger", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ok := p.UID == created.UID && p.Status.PodIP != ""
		for _, cs := range p.Status.ContainerStatuses {
			ok = ok && cs.State.Running != nil
		}
		return ok && len(p.Status.ContainerStatuses) == 2, fmt.Sprintf("%s %+v", p.Status.Phase, p.Status.ContainerStatuses)
	})
	got, err := pushCS.CoreV1().Pods("default").GetLogs("linger", &v1.PodLogOptions{Container: "app"}).DoRaw(ctx)
	if err != nil || !strings.Contains(string(got), "testapp sleep starting") || strings.Contains(string(got), lingerSecret) {
		t.Errorf("push client's logs of its running pod: %q %v", got, err)
	}
	u, _ := url.Parse(b.URL("/api/v1/namespaces/default/pods/linger/exec?" + url.Values{"container": {"app"}, "stdout": {"true"},
		"stderr": {"true"}, "command": {"/testapp", "getenv", "WHO"}}.Encode()))
	for name, ex := range kubestream.Executors(t, adminCfg, u) {
		if out, err := streamOnce(ctx, ex); out != "pushed\n" || err != nil {
			t.Errorf("admin's exec (%s) into the running pushed linger: %q %v", name, out, err)
		}
	}
	for name, d := range kubestream.Dialers(t, adminCfg, pfURL) {
		if body, err := forwardGet(d, 8080, "/"); body != "pushed-web" || err != nil {
			t.Errorf("admin's port-forward (%s) to the running pushed linger: %q %v", name, body, err)
		}
	}
	for _, e := range kubePodEvents(t, pushCS.CoreV1().RESTClient(), "linger") {
		if oldEvents[e.Name] || e.InvolvedObject.UID != created.UID {
			t.Errorf("push client sees an event not of its pod: %s %s %q (uid %s)", e.Name, e.Reason, e.Message, e.InvolvedObject.UID)
		}
	}
	for _, c := range podContainers(t, b.Node, "linger") {
		if c.Labels[runtime.LabelPodUID] != string(created.UID) {
			t.Errorf("container %s of another incarnation left: %s", c.ID[:12], describe(podContainers(t, b.Node, "linger")))
		}
	}
}

// kubePodEvents lists the Kubernetes events about pod default/name through rc.
func kubePodEvents(t *testing.T, rc rest.Interface, name string) []v1.Event {
	t.Helper()
	var list v1.EventList
	err := rc.Get().Namespace("default").Resource("events").
		Param("fieldSelector", "involvedObject.name="+name).Timeout(10 * time.Second).Do(context.Background()).Into(&list)
	if err != nil {
		t.Fatalf("list events of %s: %v", name, err)
	}
	return list.Items
}

// streamOnce runs one exec or attach session through ex for at most 5 s
// and returns its output.
func streamOnce(ctx context.Context, ex remotecommand.Executor) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out := &testutil.SyncBuffer{}
	err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: out, Stderr: out})
	return out.String(), err
}

// forwardGet forwards a local port to the pod's port remote through d, as
// kubectl port-forward does, and answers the body of GET path through it:
// an error when the forward is refused or the request fails.
func forwardGet(d httpstream.Dialer, remote int, path string) (string, error) {
	stop, ready := make(chan struct{}), make(chan struct{})
	defer close(stop)
	pf, err := portforward.NewOnAddresses(d, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", remote)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return "", err
	}
	result := make(chan error, 1)
	go func() { result <- pf.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-result:
		return "", fmt.Errorf("forward: %w", err)
	case <-time.After(10 * time.Second):
		return "", errors.New("forward: not ready in 10 s")
	}
	ports, err := pf.GetPorts()
	if err != nil {
		return "", err
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d%s", ports[0].Local, path))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
