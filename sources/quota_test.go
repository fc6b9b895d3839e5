package sources

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/etcdclient"
	"github.com/berth-dev/berth/manifest"
)

// namedCM is a ConfigMap default/name whose one value has n bytes.
func namedCM(name string, n int) []byte {
	// As the push source stores it, so that its length is what is charged.
	return []byte("apiVersion: v1\ndata:\n  v: " + strings.Repeat("x", n) + "\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: default\n")
}

// wantQuotaRefusal checks that err is the 403 naming the quota, with the
// apiserver's wording.
func wantQuotaRefusal(t *testing.T, what string, err error, msg string) {
	t.Helper()
	var pe *PushError
	if !errors.As(err, &pe) || pe.Code != http.StatusForbidden || pe.Msg != msg {
		t.Fatalf("%s: %v (%#v), want 403 %q", what, err, err, msg)
	}
}

// TestPushQuotaRefusesWritesOverIt: the write that would pass the count
// of objects or pods is a 403 naming the quota, dry run or not, and
// nothing of it is persisted; updates within the quota, deletes, and
// writes after a delete pass. A restarted source counts what is on disk.
func TestPushQuotaRefusesWritesOverIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "push")
	opts := Options{Quota: Quota{Objects: 2, Pods: 1}}
	s := NewPushSource("push", dir, opts)
	for _, name := range []string{"a", "b"} {
		if _, err := s.Put("ConfigMap", "default", name, namedCM(name, 10), PutOptions{}); err != nil {
			t.Fatalf("configmap %s within quota: %v", name, err)
		}
	}
	over := "exceeded quota: push, requested: objects=1, used: objects=2, limited: objects=2"
	for _, dry := range []bool{true, false} {
		_, err := s.Put("ConfigMap", "default", "c", namedCM("c", 10), PutOptions{DryRun: dry})
		wantQuotaRefusal(t, "third configmap", err, over)
		_, err = s.Put("Secret", "default", "c", []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: c}\nstringData: {k: v}\n"), PutOptions{Replace: true, DryRun: dry})
		wantQuotaRefusal(t, "a secret beside two configmaps", err, over)
	}
	if _, err := os.Stat(s.file(pushKinds[1], "default", "c")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("refused configmap persisted: %v", err)
	}
	cur, _ := s.Manifest("ConfigMap", "default", "a")
	if put, err := s.Put("ConfigMap", "default", "a", namedCM("a", 20), PutOptions{Base: cur, Replace: true}); err != nil || put.Created {
		t.Fatalf("update of a within the quota: %v %v", put.Created, err)
	}
	if _, err := s.Put("Pod", "default", "p", []byte(nsPod("default", "p", "img")), PutOptions{}); err != nil {
		t.Fatalf("first pod: %v", err)
	}
	_, err := s.Put("Pod", "default", "q", []byte(nsPod("default", "q", "img")), PutOptions{DryRun: true})
	wantQuotaRefusal(t, "second pod, dry run", err, "exceeded quota: push, requested: pods=1, used: pods=1, limited: pods=1")
	if _, err := s.Put("Pod", "default", "p", []byte(nsPod("default", "p", "img:2")), PutOptions{Replace: true}); err != nil {
		t.Fatalf("replace of the pod: %v", err)
	}

	// The push routes answer the same 403.
	srv := newPushServer(t, s)
	if code, body := pushRequest(t, srv, "PUT", "/configmaps/default/c", string(namedCM("c", 10))); code != http.StatusForbidden || !strings.Contains(body, over) {
		t.Fatalf("PUT over quota: %d %q", code, body)
	}

	// A restart counts what was persisted.
	again := NewPushSource("push", dir, opts)
	_, err = again.Put("ConfigMap", "default", "c", namedCM("c", 10), PutOptions{})
	wantQuotaRefusal(t, "third configmap after a restart", err, over)
	if err := again.Delete("ConfigMap", "default", "b", false); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := again.Put("ConfigMap", "default", "c", namedCM("c", 10), PutOptions{}); err != nil {
		t.Fatalf("configmap after a delete: %v", err)
	}
	u := again.scan()
	if !exactly("p")(u) || strings.Join(objectKeys(u), " ") != "ConfigMap/default/a ConfigMap/default/c" {
		t.Fatalf("snapshot %s objects %v", describeFull(u), objectKeys(u))
	}
}

// TestPushQuotaBytes: the bytes quota counts the persisted manifests; an
// update may grow an object while the total stays within it, not beyond.
func TestPushQuotaBytes(t *testing.T) {
	s := NewPushSource("push", filepath.Join(t.TempDir(), "push"), Options{Quota: Quota{Bytes: 1000}})
	a := namedCM("a", 500)
	if _, err := s.Put("ConfigMap", "default", "a", a, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	b := namedCM("b", 500)
	_, err := s.Put("ConfigMap", "default", "b", b, PutOptions{})
	wantQuotaRefusal(t, "second large configmap", err, fmt.Sprintf("exceeded quota: push, requested: bytes=%d, used: bytes=%d, limited: bytes=1000", len(b), len(a)))
	grown := namedCM("a", 900)
	if _, err := s.Put("ConfigMap", "default", "a", grown, PutOptions{Replace: true}); err != nil {
		t.Fatalf("growing a within the quota: %v", err)
	}
	_, err = s.Put("ConfigMap", "default", "a", namedCM("a", 1000), PutOptions{Replace: true})
	wantQuotaRefusal(t, "growing a beyond the quota", err, fmt.Sprintf("exceeded quota: push, requested: bytes=100, used: bytes=%d, limited: bytes=1000", len(grown)))
	if _, err := s.Put("ConfigMap", "default", "a", namedCM("a", 10), PutOptions{Replace: true}); err != nil {
		t.Fatalf("shrinking a: %v", err)
	}
	if _, err := s.Put("ConfigMap", "default", "b", b, PutOptions{}); err != nil {
		t.Fatalf("b once a shrank: %v", err)
	}
}

// TestPushQuotaLowered: files over a quota lowered since they were
// written are left out of the snapshot with an error naming the quota;
// writes that do not grow pass, a new one is refused.
func TestPushQuotaLowered(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "push")
	s := NewPushSource("push", dir, Options{})
	for _, name := range []string{"a", "b", "c"} {
		if _, err := s.Put("Pod", "default", name, []byte(nsPod("default", name, "img")), PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	low := NewPushSource("push", dir, Options{Quota: Quota{Pods: 2}})
	u := low.scan()
	if !hasPods("a", "b")(u) || len(u.Errors) != 1 || u.Errors[0].PodKey != "default/c" ||
		!strings.Contains(u.Errors[0].Err, "exceeded quota: push, requested: pods=1, used: pods=2, limited: pods=2") {
		t.Fatalf("snapshot over a lowered quota: %s", describeFull(u))
	}
	if _, err := low.Put("Pod", "default", "a", []byte(nsPod("default", "a", "img:2")), PutOptions{Replace: true}); err != nil {
		t.Fatalf("replace over a lowered quota: %v", err)
	}
	_, err := low.Put("Pod", "default", "d", []byte(nsPod("default", "d", "img")), PutOptions{})
	wantQuotaRefusal(t, "new pod over a lowered quota", err, "exceeded quota: push, requested: pods=1, used: pods=3, limited: pods=2")
}

// TestHTTPSourceQuota: pods beyond an HTTP source's quota are left out
// with an error naming the quota.
func TestHTTPSourceQuota(t *testing.T) {
	body := podManifest("a", "x") + "---\n" + podManifest("b", "x") + "---\n" + podManifest("c", "x")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(body)) }))
	t.Cleanup(srv.Close)
	updates := startSource(t, NewHTTPSource("http", srv.URL, time.Hour, nil, Options{Quota: Quota{Pods: 2}}))
	u := <-updates
	if !hasPods("a", "b")(u) || len(u.Errors) != 1 || u.Errors[0].PodKey != "default/c" ||
		!strings.Contains(u.Errors[0].Err, "exceeded quota: http, requested: pods=1, used: pods=2, limited: pods=2") {
		t.Fatalf("update %s", describeFull(u))
	}
}

// TestEtcdSourceQuota: an etcd writer cannot flood the node: keys beyond
// the quota are left out with an error naming it, and a new key never
// pushes out a pod admitted before, wherever it sorts.
func TestEtcdSourceQuota(t *testing.T) {
	t.Parallel()
	e := startEtcd(t)
	c := e.Client()
	mustPut(t, c, testPrefix+"default/b", podManifest("b", "x"))
	mustPut(t, c, testPrefix+"default/c", podManifest("c", "x"))
	s := NewEtcdSource("etcd", EtcdConfig{Client: etcdclient.Config{Endpoints: []string{e.ClientURL}, DialTimeout: time.Second},
		Prefix: testPrefix}, Options{Quota: Quota{Pods: 2}})
	s.CheckInterval = -1
	updates := startSource(t, s)
	await(t, updates, 10*time.Second, "b and c", exactly("b", "c"))
	mustPut(t, c, testPrefix+"default/a", podManifest("a", "x"))
	u := await(t, updates, 5*time.Second, "a refused", func(u Update) bool { return len(u.Errors) > 0 })
	if !hasPods("b", "c")(u) || len(u.Errors) != 1 || u.Errors[0].PodKey != "default/a" ||
		!strings.Contains(u.Errors[0].Err, "exceeded quota: etcd, requested: pods=1, used: pods=2, limited: pods=2") {
		t.Fatalf("update %s", describeFull(u))
	}
	mustDelete(t, c, testPrefix+"default/c")
	await(t, updates, 5*time.Second, "a once c is gone", exactly("a", "b"))
}

// TestQuotaGateChargesEachOriginOnce: an origin's bytes are charged with
// the first thing admitted from it; objects count apart from pods.
func TestQuotaGateChargesEachOriginOnce(t *testing.T) {
	list := manifest.DecodeAll("etcd", "list", []byte(podManifest("a", "x")+"---\n"+podManifest("b", "x")), manifest.Options{})
	big := manifest.DecodeAll("etcd", "big", []byte(podManifest("c", "x")), manifest.Options{})
	cms := manifest.DecodeAll("etcd", "cms", []byte(cmManifest+"---\n"+secretManifest), manifest.Options{})
	u := Update{Source: "etcd"}
	for _, d := range []manifest.Decoded{list, big, cms} {
		u.add(d)
	}
	sizes := map[string]int64{"list": 600, "big": 500, "cms": 300}
	var g quotaGate
	got := g.admit("etcd", Quota{Bytes: 1000, Objects: 1}, u, func(o string) int64 { return sizes[o] })
	if !hasPods("a", "b")(got) || strings.Join(objectKeys(got), " ") != "ConfigMap/default/cfg" || len(got.Errors) != 2 ||
		got.Errors[0].PodKey != "default/c" || got.Errors[0].Err != "Forbidden: exceeded quota: etcd, requested: bytes=500, used: bytes=600, limited: bytes=1000" ||
		got.Errors[1].Kind != "Secret" || got.Errors[1].Err != "Forbidden: exceeded quota: etcd, requested: objects=1, used: objects=1, limited: objects=1" {
		t.Fatalf("admitted %s objects %v", describeFull(got), objectKeys(got))
	}
	if len(u.Pods) != 3 || len(u.Errors) != 0 {
		t.Fatalf("the gate changed its input: %s", describeFull(u))
	}
}

// TestQuotaGateBoundedEqualsAdmit: the push source's gate, which admits an
// update that fits whole without a pass over its objects, leaves out and
// keeps exactly what the full pass would, through writes, deletes, and a
// quota lowered below what is held and raised again.
func TestQuotaGateBoundedEqualsAdmit(t *testing.T) {
	s := NewPushSource("push", filepath.Join(t.TempDir(), "push"), Options{Quota: Quota{Objects: 3, Pods: 2, Bytes: 1 << 20}})
	var ref quotaGate
	bounded := 0
	check := func(step string) {
		t.Helper()
		got := s.scan()
		if s.gate.whole != nil && s.gate.admitted == nil {
			bounded++
		}
		s.mu.Lock()
		want := ref.admit("push", s.opts.Quota, s.files.snapshot("push"), s.files.sizeOf)
		s.mu.Unlock()
		if g, w := describeFull(got)+fmt.Sprint(objectKeys(got)), describeFull(want)+fmt.Sprint(objectKeys(want)); g != w {
			t.Fatalf("after %s:\nbounded %s\nfull    %s", step, g, w)
		}
	}
	put := func(kind, name string, data []byte) {
		t.Helper()
		if _, err := s.Put(kind, "default", name, data, PutOptions{Replace: true}); err != nil {
			t.Fatalf("put %s %s: %v", kind, name, err)
		}
		check("put " + name)
	}
	del := func(kind, name string) {
		t.Helper()
		if err := s.Delete(kind, "default", name, false); err != nil {
			t.Fatal(err)
		}
		check("delete " + name)
	}
	put("ConfigMap", "a", namedCM("a", 10))
	put("ConfigMap", "b", namedCM("b", 10))
	put("Pod", "p", []byte(nsPod("default", "p", "img")))
	put("ConfigMap", "c", namedCM("c", 10))
	put("ConfigMap", "a", namedCM("a", 10)) // rewritten, equal
	del("ConfigMap", "b")
	put("ConfigMap", "d", namedCM("d", 10))
	s.opts.Quota.Objects = 2 // lowered below what is held
	check("quota lowered")
	put("ConfigMap", "a", namedCM("a", 10))
	del("ConfigMap", "c")
	put("Pod", "q", []byte(nsPod("default", "q", "img")))
	s.opts.Quota.Objects = 5
	check("quota raised")
	put("ConfigMap", "e", namedCM("e", 10))
	del("Pod", "p")
	put("ConfigMap", "f", namedCM("f", 10))
	if bounded == 0 {
		t.Fatal("no update was admitted whole without a pass")
	}
}
