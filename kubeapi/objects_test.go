package kubeapi

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

func TestEvents(t *testing.T) {
	f := newFixture(t, Options{})
	buf := store.EventRecorder{Store: f.st}
	f.pod(t, "file", "default", "web", nil, running("10.0.0.2"))
	buf.Record(events.Event{Time: t0.Add(time.Second), Namespace: "default", Pod: "web", PodUID: "uid-web", Source: "file", Container: "app", Type: events.Normal, Reason: "Started", Message: "Started container app"})
	buf.Record(events.Event{Time: t0.Add(2 * time.Second), Namespace: "default", Pod: "gone", PodUID: "uid-gone", Source: "file", Type: events.Warning, Reason: "Failed", Message: "x"})
	ctx := context.Background()
	// kubectl describe pod's query.
	l, err := f.cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.name=web,involvedObject.namespace=default,involvedObject.uid=uid-web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 {
		t.Fatalf("%d events", len(l.Items))
	}
	e := l.Items[0]
	if e.InvolvedObject.Kind != "Pod" || e.InvolvedObject.UID != "uid-web" || e.InvolvedObject.FieldPath != "spec.containers{app}" ||
		e.Reason != "Started" || e.Source.Component != "berth" || !e.LastTimestamp.Time.Equal(t0.Add(time.Second)) {
		t.Fatalf("event %+v", e)
	}
	f.clk.SetTime(t0.Add(65 * time.Second))
	tab := getTable(t, f, "/api/v1/events")
	if got := rowStrings(tab); len(got) != 2 || got[1] != "64s | Normal | Started | pod/web | spec.containers{app} | berth, node1 | Started container app | 64s | 1 | "+e.Name {
		t.Fatalf("event rows %q", got)
	}
	// A push token does not see the events of a file pod, nor of a gone one.
	cfg := *f.cfg
	cfg.BearerToken = "push"
	if l, err := newClientset(t, &cfg).CoreV1().Events("").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("push scope: %v %v", l, err)
	}

	w, err := f.cs.CoreV1().Events("default").Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	buf.Record(events.Event{Time: t0.Add(70 * time.Second), Namespace: "default", Pod: "web", PodUID: "uid-web", Source: "file", Type: events.Normal, Reason: "Killing", Message: "y"})
	if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*v1.Event).Reason != "Killing" {
		t.Fatalf("want ADDED Killing, got %s %v", ev.Type, ev.Object)
	}
}

// A pod that takes the name of a removed one, from another source or as
// another incarnation, is shown only its own events: the push client
// never sees the removed pod's, and each event names the UID it was
// recorded for.
func TestEventsFollowPodUID(t *testing.T) {
	f := newFixture(t, Options{})
	buf := store.EventRecorder{Store: f.st}
	rec := func(sec int, uid, source, reason string) {
		buf.Record(events.Event{Time: t0.Add(time.Duration(sec) * time.Second), Namespace: "default", Pod: "web", PodUID: uid, Source: source,
			Type: events.Normal, Reason: reason, Message: reason + " of " + uid})
	}
	rec(1, "uid-web", "file", "Started")  // the trusted pod, since removed
	rec(2, "uid-web", "file", "Killing")  // its stop
	rec(3, "uid-web", "push", "Injected") // the push source's, under the trusted pod's UID
	p := f.pod(t, "push", "default", "web", nil, v1.PodStatus{Phase: v1.PodPending})
	cp := *p
	cp.Spec = p.Spec.DeepCopy()
	cp.Spec.UID = "uid-pushed"
	if err := f.st.UpsertPod(&cp); err != nil {
		t.Fatal(err)
	}
	rec(4, "uid-pushed", "push", "Scheduled")
	ctx := context.Background()
	reasons := func(cs *kubernetes.Clientset, sel string) []string {
		t.Helper()
		l, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range l.Items {
			out = append(out, e.Reason+"@"+string(e.InvolvedObject.UID))
		}
		return out
	}
	cfg := *f.cfg
	cfg.BearerToken = "push"
	push := newClientset(t, &cfg)
	if got := reasons(push, "involvedObject.name=web"); !slices.Equal(got, []string{"Scheduled@uid-pushed"}) {
		t.Errorf("push client's events of its pod web: %q", got)
	}
	if got := reasons(f.cs, "involvedObject.name=web"); !slices.Equal(got, []string{"Started@uid-web", "Killing@uid-web", "Injected@uid-web", "Scheduled@uid-pushed"}) {
		t.Errorf("admin's events of web: %q", got)
	}
	if got := reasons(f.cs, "involvedObject.uid=uid-pushed"); !slices.Equal(got, []string{"Scheduled@uid-pushed"}) {
		t.Errorf("admin's events of the pushed pod's UID (kubectl describe's query): %q", got)
	}
}

func TestNode(t *testing.T) {
	f := newFixture(t, Options{NodeObject: func(ctx context.Context, pods int) (v1.Node, bool) {
		capacity := v1.ResourceList{v1.ResourceCPU: apiresource.MustParse("2"), v1.ResourceMemory: apiresource.MustParse("1Gi"), v1.ResourcePods: apiresource.MustParse("110")}
		return v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1", CreationTimestamp: metav1.Time{Time: t0},
			Labels:      map[string]string{"node-role.kubernetes.io/edge": ""},
			Annotations: map[string]string{"berth.io/pods": strings.Repeat("x", pods)}},
			Status: v1.NodeStatus{Capacity: capacity, Allocatable: capacity,
				Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "BerthReady"}},
				Addresses:  []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "192.0.2.1"}},
				NodeInfo:   v1.NodeSystemInfo{KubeletVersion: "berth/1.0", KernelVersion: "6.1", ContainerRuntimeVersion: "docker://28"}}}, true
	}})
	f.pod(t, "file", "default", "web", nil, running("10.0.0.2"))
	ctx := context.Background()
	n, err := f.cs.CoreV1().Nodes().Get(ctx, "node1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.UID == "" || n.ResourceVersion == "" || n.Annotations["berth.io/pods"] != "x" || n.Status.Allocatable.Cpu().String() != "2" {
		t.Fatalf("node %+v", n)
	}
	if _, err := f.cs.CoreV1().Nodes().Get(ctx, "other", metav1.GetOptions{}); err == nil || err.Error() != `nodes "other" not found` {
		t.Fatalf("other node: %v", err)
	}
	f.clk.SetTime(t0.Add(49 * time.Hour))
	tab := getTable(t, f, "/api/v1/nodes")
	if got := rowStrings(tab); len(got) != 1 || got[0] != "node1 | Ready | edge | 2d1h | berth/1.0 | 192.0.2.1 | <none> | <unknown> | 6.1 | docker://28" {
		t.Fatalf("node rows %q", got)
	}
	// Without a rendering yet: the name and an Unknown Ready.
	g := newFixture(t, Options{})
	n, err = g.cs.CoreV1().Nodes().Get(ctx, "node1", metav1.GetOptions{})
	if err != nil || n.Status.Conditions[0].Status != v1.ConditionUnknown {
		t.Fatalf("unmeasured node: %+v %v", n, err)
	}
}

func TestConfigMapsSecretsClaims(t *testing.T) {
	f := newFixture(t, Options{})
	class := "local"
	objs := []*model.Object{
		{Kind: model.KindConfigMap, Key: "default/conf", Source: "file", Origin: "a.yaml", Ref: model.ObjectRef(model.KindConfigMap, "default/conf"),
			ConfigMap: &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "conf", Namespace: "default"}, Data: map[string]string{"a": "1", "b": "2"}}},
		{Kind: model.KindSecret, Key: "default/pw", Source: "file", Origin: "a.yaml", Ref: model.ObjectRef(model.KindSecret, "default/pw"),
			Secret: &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pw", Namespace: "default", Annotations: map[string]string{
				v1.LastAppliedConfigAnnotation: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"pw"},"data":{"password":"aHVudGVyMg=="},"stringData":{"user":"root"}}`}},
				Data:       map[string][]byte{"password": []byte("hunter2")},
				StringData: map[string]string{"user": "root"}}},
		{Kind: model.KindPVC, Key: "default/data", Source: "file", Origin: "a.yaml", Ref: model.ObjectRef(model.KindPVC, "default/data"),
			PVC: &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"},
				Spec:   v1.PersistentVolumeClaimSpec{StorageClassName: &class, AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}},
				Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound}}},
	}
	if err := f.st.ApplySource("file", func(store.View) (store.SourceWrite, error) {
		return store.SourceWrite{Objects: objs}, nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cm, err := f.cs.CoreV1().ConfigMaps("default").Get(ctx, "conf", metav1.GetOptions{})
	if err != nil || cm.Data["a"] != "1" || cm.Annotations[ReadOnlyAnnotation] != "true" || cm.UID == "" || cm.CreationTimestamp.IsZero() {
		t.Fatalf("configmap %+v %v", cm, err)
	}
	s, err := f.cs.CoreV1().Secrets("default").Get(ctx, "pw", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Data) != 2 || len(s.Data["password"]) != 0 || len(s.Data["user"]) != 0 || s.Annotations[WithheldAnnotation] != "true" || s.Type != v1.SecretTypeOpaque {
		t.Fatalf("secret data served: %+v", s)
	}
	if got := s.Annotations[v1.LastAppliedConfigAnnotation]; got != `{"apiVersion":"v1","data":{"password":""},"kind":"Secret","metadata":{"name":"pw"},"stringData":{"user":""}}` {
		t.Fatalf("last-applied served as %s", got)
	}
	l, err := f.cs.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 || l.Items[0].Name != "data" {
		t.Fatalf("claims %v %v", l, err)
	}
	f.clk.SetTime(t0.Add(3 * time.Minute))
	for path, want := range map[string]string{
		"/api/v1/namespaces/default/configmaps":             "conf | 2 | 3m",
		"/api/v1/secrets":                                   "pw | Opaque | 2 | 3m",
		"/api/v1/namespaces/default/persistentvolumeclaims": "data | Pending |  |  |  | local | <unset> | 3m | <unset>",
	} {
		if got := rowStrings(getTable(t, f, path)); len(got) != 1 || got[0] != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	cfg := *f.cfg
	cfg.BearerToken = "push"
	if l, err := newClientset(t, &cfg).CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("push scope sees file's configmaps: %v %v", l, err)
	}
}

func TestNamespaces(t *testing.T) {
	f := newFixture(t, Options{})
	f.pod(t, "file", "kube-system", "dns", nil, v1.PodStatus{})
	l, err := f.cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if err != nil || len(l.Items) != 2 || l.Items[0].Name != "default" || l.Items[1].Name != "kube-system" || l.Items[1].Status.Phase != v1.NamespaceActive {
		t.Fatalf("namespaces %+v %v", l, err)
	}
	f.clk.SetTime(t0.Add(3 * time.Minute))
	if got := rowStrings(getTable(t, f, "/api/v1/namespaces/kube-system")); len(got) != 1 || got[0] != "kube-system | Active | 3m" {
		t.Fatalf("namespace rows %q", got)
	}
	if err := f.st.DeletePod("kube-system/dns"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.cs.CoreV1().Namespaces().Get(context.Background(), "kube-system", metav1.GetOptions{}); err == nil {
		t.Fatal("a namespace without objects is served")
	}
}
