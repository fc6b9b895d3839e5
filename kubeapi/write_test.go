package kubeapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/berth-dev/berth/informer"
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/sources"
	"github.com/berth-dev/berth/store"
)

// writeFixture is an API with writes through a real push source (in a
// temporary directory) whose updates a real source informer applies to the
// store, served as the server mounts the routes minus the token checks:
// "Authorization: Bearer push" makes a push-scoped request.
type writeFixture struct {
	st   *store.Store
	dir  string
	push *sources.PushSource
	srv  *httptest.Server
	cs   *kubernetes.Clientset
}

func newWriteFixture(t testing.TB) *writeFixture {
	t.Helper()
	return newWriteFixtureWith(t, manifest.Options{})
}

// newWriteFixtureWith is newWriteFixture with the push source's options;
// each of apiOpts changes the API's Options.
func newWriteFixtureWith(t testing.TB, opts manifest.Options, apiOpts ...func(*Options)) *writeFixture {
	t.Helper()
	return newWriteFixtureSource(t, sources.Options{Options: opts}, apiOpts...)
}

// newWriteFixtureSource is newWriteFixture with the push source's
// sources.Options (its quota); each of apiOpts changes the API's Options.
func newWriteFixtureSource(t testing.TB, opts sources.Options, apiOpts ...func(*Options)) *writeFixture {
	t.Helper()
	st, err := store.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &writeFixture{st: st, dir: filepath.Join(t.TempDir(), "push")}
	f.push = sources.NewPushSource("push", f.dir, opts)
	inf := informer.NewSourceInformer(st, nil, nil, nil)
	f.push.SetApplier(inf.ApplyResult)
	for _, s := range []string{"push", "file"} {
		if err := inf.Register(s); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	updates := make(chan sources.Update)
	done := make(chan struct{}, 2)
	go func() { _ = f.push.Run(ctx, updates); done <- struct{}{} }()
	go func() { inf.Run(ctx, updates); done <- struct{}{} }()
	t.Cleanup(func() { cancel(); <-done; <-done })

	o := Options{Store: st, Node: "node1", PushSource: "push",
		Visible: func(r *http.Request, p *model.Pod) bool {
			return r.Header.Get("Authorization") != "Bearer push" || p.Source == "push"
		}}
	for _, set := range apiOpts {
		set(&o)
	}
	api := New(o)
	api.AddWrites(f.push)
	mux := http.NewServeMux()
	for _, rt := range api.Routes() {
		mux.Handle(rt.Pattern, rt.Handler)
	}
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	f.cs = kubernetes.NewForConfigOrDie(&rest.Config{Host: f.srv.URL})
	return f
}

// filePod stores a pod of the file source, as the file source would.
func (f *writeFixture) filePod(t *testing.T, name string) {
	t.Helper()
	p := &model.Pod{Key: "default/" + name, Source: "file", Origin: "/etc/berth/pods/" + name + ".yaml",
		Spec: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "img"}}}}}
	if err := f.st.UpsertPod(p); err != nil {
		t.Fatal(err)
	}
}

// do sends a raw request and returns the status, headers and body.
func (f *writeFixture) do(t testing.TB, method, path, ctype, body string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func testPod(name, image string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: image}}}}
}

var bg = context.Background()

// TestWriteLifecycle: create, get at once, create again (409), replace,
// delete, get (404), through client-go's typed client.
func TestWriteLifecycle(t *testing.T) {
	f := newWriteFixture(t)
	pods := f.cs.CoreV1().Pods("default")
	got, err := pods.Create(bg, testPod("web", "img:1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if got.Name != "web" || got.Spec.Containers[0].Image != "img:1" || got.UID == "" {
		t.Fatalf("create answered %+v", got.ObjectMeta)
	}
	live, err := pods.Get(bg, "web", metav1.GetOptions{})
	if err != nil || live.UID != got.UID {
		t.Fatalf("get after create: %v %v", live, err)
	}
	if _, err := pods.Create(bg, testPod("web", "img:1"), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: %v", err)
	}
	live.Spec.Containers[0].Image = "img:2"
	upd, err := pods.Update(bg, live, metav1.UpdateOptions{})
	if err != nil || upd.Spec.Containers[0].Image != "img:2" || upd.UID != got.UID {
		t.Fatalf("update: %v %v", upd, err)
	}
	if p, _ := f.st.Pod(nil, "default/web"); p == nil || p.Spec.Spec.Containers[0].Image != "img:2" {
		t.Fatalf("store after update: %+v", p)
	}
	manifest, _ := os.ReadFile(filepath.Join(f.dir, "default_web.yaml"))
	for _, leaked := range []string{"resourceVersion", "berth.io/", "status:", "uid:"} {
		if strings.Contains(string(manifest), leaked) {
			t.Errorf("persisted manifest keeps %q:\n%s", leaked, manifest)
		}
	}
	if err := pods.Delete(bg, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := pods.Get(bg, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
	if err := pods.Delete(bg, "web", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := pods.Update(bg, live, metav1.UpdateOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("update of a deleted pod: %v", err)
	}
}

// TestWriteInvalid: a pod that does not validate is a 422 naming the
// field, as kubectl prints it; an invalid edit keeps the last good spec.
func TestWriteInvalid(t *testing.T) {
	f := newWriteFixture(t)
	pods := f.cs.CoreV1().Pods("default")
	_, err := pods.Create(bg, testPod("web", ""), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || err.Error() != `Pod "web" is invalid: spec.containers[0].image: Required value` {
		t.Fatalf("create without image: %v", err)
	}
	var st apierrors.APIStatus
	if !errorsAs(err, &st) || len(st.Status().Details.Causes) != 1 || st.Status().Details.Causes[0].Field != "spec.containers[0].image" ||
		st.Status().Details.Causes[0].Type != metav1.CauseTypeFieldValueRequired {
		t.Fatalf("causes: %+v", st.Status().Details)
	}
	if _, err := pods.Create(bg, testPod("web", "img:1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	live, err := pods.Get(bg, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.Spec.Containers[0].Image = ""
	if _, err := pods.Update(bg, live, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("invalid update: %v", err)
	}
	if p, _ := f.st.Pod(nil, "default/web"); p == nil || p.Spec.Spec.Containers[0].Image != "img:1" {
		t.Fatalf("the last good spec is gone: %+v", p)
	}
}

func errorsAs(err error, st *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	*st = s
	return ok
}

// TestWriteDryRun: dryRun=All validates and answers without persisting.
func TestWriteDryRun(t *testing.T) {
	f := newWriteFixture(t)
	pods := f.cs.CoreV1().Pods("default")
	dry := []string{metav1.DryRunAll}
	got, err := pods.Create(bg, testPod("web", "img:1"), metav1.CreateOptions{DryRun: dry})
	if err != nil || got.Spec.Containers[0].Image != "img:1" {
		t.Fatalf("dry-run create: %v %v", got, err)
	}
	if _, err := pods.Create(bg, testPod("web", ""), metav1.CreateOptions{DryRun: dry}); !apierrors.IsInvalid(err) {
		t.Fatalf("dry-run of an invalid pod: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "default_web.yaml")); !os.IsNotExist(err) {
		t.Fatalf("dry run persisted: %v", err)
	}
	if _, err := pods.Get(bg, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after dry run: %v", err)
	}
	if _, err := pods.Create(bg, testPod("web", "img:1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(bg, "web", metav1.DeleteOptions{DryRun: dry}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(bg, "web", metav1.GetOptions{}); err != nil {
		t.Fatalf("dry-run delete deleted: %v", err)
	}
}

// TestWriteReadOnly: a trusted source's pod cannot be changed: 403 naming
// the source and its file; a push-scoped token learns only "another
// source". Creating its key is a 409.
func TestWriteReadOnly(t *testing.T) {
	f := newWriteFixture(t)
	f.filePod(t, "web")
	pods := f.cs.CoreV1().Pods("default")
	want := `pods "web" is read-only: it comes from source file (/etc/berth/pods/web.yaml); edit it there`
	if _, err := pods.Update(bg, testPod("web", "img:2"), metav1.UpdateOptions{}); !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("update: %v", err)
	}
	if _, err := pods.Patch(bg, "web", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("patch: %v", err)
	}
	if err := pods.Delete(bg, "web", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("delete: %v", err)
	}
	if _, err := pods.Create(bg, testPod("web", "img:1"), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create over a file pod: %v", err)
	}
	code, _, body := f.do(t, "DELETE", "/api/v1/namespaces/default/pods/web", "", "", "Authorization", "Bearer push")
	if code != http.StatusForbidden || !strings.Contains(body, "comes from another source") || strings.Contains(body, "/etc/berth") {
		t.Fatalf("push-scoped delete: %d %s", code, body)
	}
	if p, _ := f.st.Pod(nil, "default/web"); p == nil || p.Source != "file" {
		t.Fatalf("file pod changed: %+v", p)
	}
}

const podUnknownField = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"foo":1,"containers":[{"name":"app","image":"img:1","bar":2}]}}`

// TestWriteFieldValidation: Strict refuses unknown fields with a 400
// naming each, Warn accepts with a Warning per field, Ignore silently;
// the fields never reach the persisted manifest.
func TestWriteFieldValidation(t *testing.T) {
	f := newWriteFixture(t)
	coll := "/api/v1/namespaces/default/pods"
	code, _, body := f.do(t, "POST", coll+"?fieldValidation=Strict", "application/json", podUnknownField)
	if code != http.StatusBadRequest || !strings.Contains(body, `strict decoding error: unknown field \"spec.foo\", unknown field \"spec.containers[0].bar\"`) {
		t.Fatalf("Strict: %d %s", code, body)
	}
	code, hdr, body := f.do(t, "POST", coll+"?fieldValidation=Warn", "application/json", podUnknownField)
	if code != http.StatusCreated || len(hdr.Values("Warning")) != 2 || hdr.Values("Warning")[0] != `299 - "unknown field \"spec.foo\""` {
		t.Fatalf("Warn: %d %v %s", code, hdr.Values("Warning"), body)
	}
	data, _ := os.ReadFile(filepath.Join(f.dir, "default_web.yaml"))
	if strings.Contains(string(data), "foo") || strings.Contains(string(data), "bar") {
		t.Fatalf("unknown fields persisted:\n%s", data)
	}
	code, hdr, body = f.do(t, "PUT", coll+"/web?fieldValidation=Ignore", "application/json", podUnknownField)
	if code != http.StatusOK || len(hdr.Values("Warning")) != 0 {
		t.Fatalf("Ignore: %d %v %s", code, hdr.Values("Warning"), body)
	}
	code, _, body = f.do(t, "PATCH", coll+"/web?fieldValidation=Strict", "application/merge-patch+json", `{"spec":{"baz":true}}`)
	if code != http.StatusBadRequest || !strings.Contains(body, `unknown field \"spec.baz\"`) {
		t.Fatalf("Strict patch: %d %s", code, body)
	}
	if code, _, body = f.do(t, "POST", coll+"?fieldValidation=Loose", "application/json", podUnknownField); code != http.StatusBadRequest {
		t.Fatalf("bad mode: %d %s", code, body)
	}
}

// TestWritePatch: the three patch types kubectl sends change the running
// spec; server-side apply is a 415 saying what to use.
func TestWritePatch(t *testing.T) {
	f := newWriteFixture(t)
	pods := f.cs.CoreV1().Pods("default")
	p := testPod("web", "img:1")
	p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "side", Image: "side:1"})
	if _, err := pods.Create(bg, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	image := func(i int) string {
		t.Helper()
		sp, _ := f.st.Pod(nil, "default/web")
		return sp.Spec.Spec.Containers[i].Image
	}
	smp := `{"spec":{"$setElementOrder/containers":[{"name":"app"},{"name":"side"}],"containers":[{"name":"side","image":"side:2"}]}}`
	if _, err := pods.Patch(bg, "web", types.StrategicMergePatchType, []byte(smp), metav1.PatchOptions{}); err != nil {
		t.Fatalf("strategic: %v", err)
	}
	if image(0) != "img:1" || image(1) != "side:2" {
		t.Fatalf("strategic merge: %s %s", image(0), image(1))
	}
	got, err := pods.Patch(bg, "web", types.MergePatchType, []byte(`{"metadata":{"labels":{"tier":"front"}}}`), metav1.PatchOptions{})
	if err != nil || got.Labels["tier"] != "front" || got.Labels["app"] != "web" {
		t.Fatalf("merge: %v %v", got, err)
	}
	jp := `[{"op":"test","path":"/spec/containers/0/image","value":"img:1"},{"op":"replace","path":"/spec/containers/0/image","value":"img:3"}]`
	if _, err := pods.Patch(bg, "web", types.JSONPatchType, []byte(jp), metav1.PatchOptions{}); err != nil || image(0) != "img:3" {
		t.Fatalf("json patch: %v %s", err, image(0))
	}
	if _, err := pods.Patch(bg, "web", types.JSONPatchType, []byte(jp), metav1.PatchOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("failed test op: %v", err)
	}
	_, err = pods.Patch(bg, "web", types.ApplyYAMLPatchType, []byte("{}"), metav1.PatchOptions{FieldManager: "x"})
	if !apierrors.IsUnsupportedMediaType(err) || !strings.Contains(err.Error(), "client-side") {
		t.Fatalf("server-side apply: %v", err)
	}
	if _, err := pods.Patch(bg, "web", types.MergePatchType, []byte(`{"metadata":{"name":"other"}}`), metav1.PatchOptions{}); !apierrors.IsBadRequest(err) {
		t.Fatalf("renaming patch: %v", err)
	}
	if _, err := pods.Patch(bg, "nope", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("patch of a missing pod: %v", err)
	}
}

// TestWritePreconditions: a stale resourceVersion or another UID is a 409.
func TestWritePreconditions(t *testing.T) {
	f := newWriteFixture(t)
	pods := f.cs.CoreV1().Pods("default")
	if _, err := pods.Create(bg, testPod("web", "img:1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	old, err := pods.Get(bg, "web", metav1.GetOptions{})
	if err != nil || old.ResourceVersion == "" {
		t.Fatalf("get: %v %v", old, err)
	}
	cur := old.DeepCopy()
	cur.Spec.Containers[0].Image = "img:2"
	if _, err := pods.Update(bg, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update at the current version: %v", err)
	}
	stale := old.DeepCopy()
	stale.Spec.Containers[0].Image = "img:3"
	if _, err := pods.Update(bg, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("update at a stale version: %v", err)
	}
	other := types.UID("another")
	if err := pods.Delete(bg, "web", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &other}}); !apierrors.IsConflict(err) {
		t.Fatalf("delete with another UID: %v", err)
	}
}

// TestWriteObjects: ConfigMaps and Secrets go the same way.
func TestWriteObjects(t *testing.T) {
	f := newWriteFixture(t)
	cms := f.cs.CoreV1().ConfigMaps("default")
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "conf"}, Data: map[string]string{"a": "1"}}
	if _, err := cms.Create(bg, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	if _, err := cms.Patch(bg, "conf", types.StrategicMergePatchType, []byte(`{"data":{"b":"2"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch configmap: %v", err)
	}
	o, _ := f.st.Object(nil, model.KindConfigMap, "default/conf")
	if o == nil || o.ConfigMap.Data["a"] != "1" || o.ConfigMap.Data["b"] != "2" {
		t.Fatalf("stored configmap: %+v", o)
	}
	secrets := f.cs.CoreV1().Secrets("default")
	sec := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pw"}, Data: map[string][]byte{"pw": []byte("s3cret")}}
	if _, err := secrets.Create(bg, sec, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create secret: %v", err)
	}
	if o, _ := f.st.Object(nil, model.KindSecret, "default/pw"); o == nil || string(o.Secret.Data["pw"]) != "s3cret" {
		t.Fatalf("stored secret: %+v", o)
	}
	if err := cms.Delete(bg, "conf", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete configmap: %v", err)
	}
	if o, _ := f.st.Object(nil, model.KindConfigMap, "default/conf"); o != nil {
		t.Fatalf("configmap still stored: %+v", o)
	}
	if err := secrets.Delete(bg, "nope", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("delete of a missing secret: %v", err)
	}
}

// TestWritePodSecurity: the push source's Pod Security level applies to
// the API's writes as to its own routes: a host-network pod under
// baseline is a 422 naming the field, and nothing is persisted.
func TestWritePodSecurity(t *testing.T) {
	f := newWriteFixtureWith(t, manifest.Options{Level: model.LevelBaseline})
	p := testPod("web", "img:1")
	p.Spec.HostNetwork = true
	_, err := f.cs.CoreV1().Pods("default").Create(bg, p, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.hostNetwork") {
		t.Fatalf("host network under baseline: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "default_web.yaml")); !os.IsNotExist(err) {
		t.Fatalf("refused pod persisted: %v", err)
	}
}

// TestWriteApplyTwice: kubectl's client-side apply, as it computes it
// (three-way strategic merge from the last-applied annotation, the new
// manifest and the object as GET serves it): created, then configured with
// the change in the store, a removed label gone and the served
// annotations never persisted.
func TestWriteApplyTwice(t *testing.T) {
	f := newWriteFixture(t)
	pods := f.cs.CoreV1().Pods("default")
	const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"
	manifestJSON := func(image string, labels string) []byte {
		return []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"default","labels":` + labels +
			`},"spec":{"containers":[{"name":"app","image":"` + image + `"}]}}`)
	}
	first := manifestJSON("img:1", `{"app":"web","old":"yes"}`)
	p := testPod("web", "img:1")
	p.Labels["old"] = "yes"
	p.Annotations = map[string]string{lastApplied: string(first)}
	if _, err := pods.Create(bg, p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("apply 1 (create): %v", err)
	}
	live, err := pods.Get(bg, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	liveJSON, _ := json.Marshal(live)
	second := manifestJSON("img:2", `{"app":"web"}`)
	modified := mustSetAnnotation(t, second, lastApplied, string(second))
	patch, err := strategicpatch.CreateThreeWayMergePatch(first, modified, liveJSON, mustLookup(t), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Patch(bg, "web", types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldValidation: "Strict"}); err != nil {
		t.Fatalf("apply 2 (patch %s): %v", patch, err)
	}
	sp, _ := f.st.Pod(nil, "default/web")
	if sp.Spec.Spec.Containers[0].Image != "img:2" || sp.Spec.Labels["old"] != "" || sp.Spec.Annotations[lastApplied] != string(second) {
		t.Fatalf("after apply 2: image %s labels %v annotations %v", sp.Spec.Spec.Containers[0].Image, sp.Spec.Labels, sp.Spec.Annotations)
	}
	for k := range sp.Spec.Annotations {
		if strings.HasPrefix(k, "berth.io/") {
			t.Errorf("served annotation %s persisted", k)
		}
	}
}

func mustSetAnnotation(t *testing.T, obj []byte, k, v string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(obj, &m); err != nil {
		t.Fatal(err)
	}
	m["metadata"].(map[string]any)["annotations"] = map[string]any{k: v}
	out, _ := json.Marshal(m)
	return out
}

func mustLookup(t *testing.T) strategicpatch.LookupPatchMeta {
	t.Helper()
	meta, err := strategicpatch.NewPatchMetaFromStruct(&v1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	return meta
}

// TestWriteNotAdmittedWarns: a valid pod that admission refuses (its host
// port is another pod's) is persisted, as a manifest file would be, and
// answered at once with a warning naming the refusal.
func TestWriteNotAdmittedWarns(t *testing.T) {
	f := newWriteFixture(t)
	pod := func(name string) string {
		return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `"},"spec":{"containers":[{"name":"app","image":"img:1",` +
			`"ports":[{"containerPort":80,"hostPort":` + "18080" + `}]}]}}`
	}
	coll := "/api/v1/namespaces/default/pods"
	if code, _, body := f.do(t, "POST", coll, "application/json", pod("first")); code != http.StatusCreated {
		t.Fatalf("first: %d %s", code, body)
	}
	code, hdr, body := f.do(t, "POST", coll, "application/json", pod("second"))
	if code != http.StatusCreated || len(hdr.Values("Warning")) != 1 || !strings.Contains(hdr.Get("Warning"), "not admitted") ||
		!strings.Contains(hdr.Get("Warning"), "18080") {
		t.Fatalf("second: %d %v %s", code, hdr.Values("Warning"), body)
	}
}

// TestWriteBodies: a YAML body and generateName (kubectl create's
// --generate-name, client-go users) are taken; a body naming another
// namespace, another name or kind is a 400, protobuf from client-go
// decodes (TestWriteLifecycle), other media types are a 415.
func TestWriteBodies(t *testing.T) {
	f := newWriteFixture(t)
	coll := "/api/v1/namespaces/default/pods"
	yamlPod := "apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: gen-\nspec:\n  containers:\n  - name: app\n    image: img:1\n"
	code, _, body := f.do(t, "POST", coll, "application/yaml", yamlPod)
	var got v1.Pod
	if code != http.StatusCreated || json.Unmarshal([]byte(body), &got) != nil || !strings.HasPrefix(got.Name, "gen-") || len(got.Name) != len("gen-")+5 {
		t.Fatalf("generateName: %d %s", code, body)
	}
	for _, tc := range []struct{ method, path, ctype, body string }{
		{"POST", coll, "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"other"},"spec":{"containers":[{"name":"app","image":"i"}]}}`},
		{"POST", coll, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`},
		{"PUT", coll + "/" + got.Name, "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"},"spec":{"containers":[{"name":"app","image":"i"}]}}`},
		{"POST", coll, "application/json", `[1]`},
	} {
		if code, _, body := f.do(t, tc.method, tc.path, tc.ctype, tc.body); code != http.StatusBadRequest || !strings.Contains(body, `"kind":"Status"`) {
			t.Errorf("%s %s: %d %s, want 400", tc.method, tc.body, code, body)
		}
	}
	if code, _, body := f.do(t, "POST", coll, "text/plain", "x"); code != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: %d %s", code, body)
	}
}
