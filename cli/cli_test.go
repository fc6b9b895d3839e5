package cli

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/runtime/fake"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/kubeapi"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/server"
	"github.com/berth-dev/berth/store"
)

// cliAPI is a real berth API (server.New with the kubeapi routes, as the
// agent mounts them, over a real store, logs and exec from a fake runtime)
// that needs token "tok", kept in tokenFile.
type cliAPI struct {
	url       string
	tokenFile string
	st        *store.Store
	rt        *fake.Runtime
	ev        store.EventRecorder
	handler   http.Handler
	// clock is the API's: the AGE it prints stands still.
	clock *clocktesting.FakeClock
}

func newCLIAPI(t *testing.T) *cliAPI {
	t.Helper()
	st, _ := store.New(nil)
	a := &cliAPI{st: st, rt: fake.New(nil), ev: store.EventRecorder{Store: st}}
	a.rt.AddImage("img")
	s := server.New(server.Options{Store: st, Tokens: []string{"tok"}, Events: a.ev.List})
	server.RegisterLogs(s, a.rt)
	a.clock = clocktesting.NewFakeClock(time.Now())
	kube := kubeapi.New(kubeapi.Options{Store: st, Node: "node-1", Visible: s.Visible, Clock: a.clock})
	kube.AddStreams(a.rt)
	server.RegisterKube(s, kube.Routes())
	a.handler = s
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	a.url = srv.URL
	a.tokenFile = filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(a.tokenFile, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return a
}

// flags are the client flags that reach a.
func (a *cliAPI) flags() []string { return []string{"--server", a.url, "--token-file", a.tokenFile} }

// addPod stores pod ns/name with containers ctrs, Running.
func (a *cliAPI) addPod(t *testing.T, ns, name string, ctrs ...string) {
	t.Helper()
	a.addPodWith(t, ns, name, nil, ctrs...)
}

// addPodWith is addPod with edit applied to the pod before it is stored.
func (a *cliAPI) addPodWith(t *testing.T, ns, name string, edit func(*model.Pod), ctrs ...string) {
	t.Helper()
	spec := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	var sts []v1.ContainerStatus
	for _, c := range ctrs {
		spec.Spec.Containers = append(spec.Spec.Containers, v1.Container{Name: c, Image: "img"})
		sts = append(sts, v1.ContainerStatus{Name: c, Ready: true, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}})
	}
	p := &model.Pod{Key: ns + "/" + name, Source: "file", Origin: "/p/" + name + ".yaml", Spec: spec,
		SeenAt: time.Now(), Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: sts}}
	if edit != nil {
		edit(p)
	}
	if err := a.st.UpsertPod(p); err != nil {
		t.Fatal(err)
	}
}

// addContainer records attempt of container ctr of pod ns/name (of the
// file source, as addPod stores it) on the fake runtime, with log text.
func (a *cliAPI) addContainer(t *testing.T, ns, pod, ctr string, attempt int, text string) {
	t.Helper()
	labels := map[string]string{runtime.LabelPodNamespace: ns, runtime.LabelPodName: pod, runtime.LabelSource: "file",
		runtime.LabelContainerName: ctr, runtime.LabelAttempt: strconv.Itoa(attempt)}
	id, err := a.rt.CreateContainer(context.Background(), &runtime.ContainerConfig{
		Name: pod + "-" + ctr + "-" + strconv.Itoa(attempt), Image: "img", Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	a.rt.SetLogs(id, text)
	c, _ := a.rt.InspectContainer(context.Background(), id)
	if _, err := a.st.UpsertContainer(c); err != nil {
		t.Fatal(err)
	}
	// The status names the new instance, and the one before it as its last
	// state, as the controller writes it: the API's logs read them.
	if _, err := a.st.UpdatePod(ns+"/"+pod, func(p *model.Pod) bool {
		p.Status = *p.Status.DeepCopy()
		for i := range p.Status.ContainerStatuses {
			cs := &p.Status.ContainerStatuses[i]
			if cs.Name != ctr {
				continue
			}
			if cs.ContainerID != "" {
				cs.LastTerminationState.Terminated = &v1.ContainerStateTerminated{ContainerID: cs.ContainerID}
			}
			cs.ContainerID = "docker://" + id
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
}

// runContainer records container ctr of pod ns/name running on the fake
// runtime, where exec runs its built-in commands.
func (a *cliAPI) runContainer(t *testing.T, ns, pod, ctr string) {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{runtime.LabelPodNamespace: ns, runtime.LabelPodName: pod, runtime.LabelSource: "file",
		runtime.LabelContainerName: ctr, runtime.LabelAttempt: "0"}
	id, err := a.rt.CreateContainer(ctx, &runtime.ContainerConfig{Name: pod + "-" + ctr, Image: "img", Labels: labels})
	if err == nil {
		err = a.rt.StartContainer(ctx, id)
	}
	if err != nil {
		t.Fatal(err)
	}
	c, _ := a.rt.InspectContainer(ctx, id)
	if _, err := a.st.UpsertContainer(c); err != nil {
		t.Fatal(err)
	}
}

// testRoot is berth's command tree as Main builds it, for the commands
// these tests run.
func testRoot() *cobra.Command {
	root := &cobra.Command{Use: "berth", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(getCmd(), withPodCompletion(execCmd()), logsCmd(), describeCmd(), kubeconfigCmd())
	return root
}

func runCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := testRoot()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// closedURL is the URL of a local port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

func TestCommandsReportUnreachableBerth(t *testing.T) {
	url := closedURL(t)
	for _, args := range [][]string{
		{"get", "pods"},
		{"get", "pods", "-w"},
		{"logs", "web"},
		{"logs", "web", "-c", "app", "-f"},
		{"describe", "web"},
		{"describe", "pod", "web"},
	} {
		_, _, err := runCLI(t, append(args, "--server", url)...)
		if want := "cannot reach berth at " + url + ": "; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("berth %s: %v, want %q...", strings.Join(args, " "), err, want)
		}
	}
}
