package sources

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/etcdclient"
	"github.com/berth-dev/berth/model"
)

const (
	cmManifest     = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {mode: fast}\n"
	secretManifest = "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: hunter2-value}\n"
)

// objectKeys lists an update's objects as "Kind/ns/name".
func objectKeys(u Update) []string {
	var out []string
	for _, o := range u.Objects {
		out = append(out, o.Kind+"/"+o.Key())
	}
	slices.Sort(out)
	return out
}

func hasObjects(want ...string) func(Update) bool {
	slices.Sort(want)
	return func(u Update) bool { return u.Err == nil && len(u.Errors) == 0 && slices.Equal(objectKeys(u), want) }
}

// TestEtcdSourceObjects: ConfigMaps and Secrets under the node's
// configmaps/ and secrets/ prefixes come and go with their keys.
func TestEtcdSourceObjects(t *testing.T) {
	t.Parallel()
	e := startEtcd(t)
	c := e.Client()
	mustPut(t, c, "/registry/hosts/n1/configmaps/default/cfg", cmManifest)
	s := NewEtcdSource("etcd", EtcdConfig{Client: etcdclient.Config{Endpoints: []string{e.ClientURL}, DialTimeout: time.Second},
		Prefix: testPrefix, ObjectPrefixes: []string{"/registry/hosts/n1/configmaps/", "/registry/hosts/n1/secrets/"}}, Options{})
	s.CheckInterval = -1
	updates := startSource(t, s)
	await(t, updates, 10*time.Second, "the ConfigMap listed", hasObjects("ConfigMap/default/cfg"))
	mustPut(t, c, "/registry/hosts/n1/secrets/default/creds", secretManifest)
	u := await(t, updates, 5*time.Second, "the Secret watched", hasObjects("ConfigMap/default/cfg", "Secret/default/creds"))
	for _, o := range u.Objects {
		if o.Secret != nil && string(o.Secret.Data["password"]) != "hunter2-value" {
			t.Fatalf("stringData not merged into data: %v", o.Secret.Data)
		}
	}
	mustDelete(t, c, "/registry/hosts/n1/configmaps/default/cfg")
	await(t, updates, 5*time.Second, "the ConfigMap deleted", hasObjects("Secret/default/creds"))
}

// TestPushSourceObjects: the push API takes ConfigMaps and Secrets at
// their own paths and answers with keys, never values.
func TestPushSourceObjects(t *testing.T) {
	s := NewPushSource("push", filepath.Join(t.TempDir(), "push"), Options{})
	srv := newPushServer(t, s)
	updates := startSource(t, s)
	await(t, updates, 5*time.Second, "empty start", exactly())
	code, body := pushRequest(t, srv, "PUT", "/secrets/default/creds", secretManifest)
	if code != http.StatusCreated || !strings.Contains(body, "password") || strings.Contains(body, "hunter2") {
		t.Fatalf("PUT secret: %d %s", code, body)
	}
	if code, body := pushRequest(t, srv, "POST", "/configmaps/default/cfg", cmManifest); code != http.StatusCreated {
		t.Fatalf("POST configmap: %d %s", code, body)
	}
	await(t, updates, 5*time.Second, "both objects", hasObjects("ConfigMap/default/cfg", "Secret/default/creds"))
	if code, body := pushRequest(t, srv, "PUT", "/configmaps/default/other", cmManifest); code != http.StatusBadRequest {
		t.Errorf("a body naming another object: %d %s", code, body)
	}
	if code, body := pushRequest(t, srv, "PUT", "/secrets/default/cfg", cmManifest); code != http.StatusBadRequest {
		t.Errorf("a ConfigMap at a Secret's path: %d %s", code, body)
	}
	if code, body := pushRequest(t, srv, "DELETE", "/secrets/default/creds", ""); code != http.StatusOK {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	await(t, updates, 5*time.Second, "the Secret gone", hasObjects("ConfigMap/default/cfg"))
}

// TestHTTPSourceListOfObjects: a v1 List mixing a Pod, a ConfigMap and a
// Secret is read whole.
func TestHTTPSourceListOfObjects(t *testing.T) {
	list := `{"apiVersion":"v1","kind":"List","items":[
 {"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"c","image":"nginx"}]}},
 {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},"data":{"a":"b"}},
 {"apiVersion":"v1","kind":"Secret","metadata":{"name":"creds"},"data":{"password":"aHVudGVyMg=="}}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(list)) }))
	t.Cleanup(srv.Close)
	updates := startSource(t, NewHTTPSource("http", srv.URL, time.Hour, nil, Options{}))
	u := await(t, updates, 5*time.Second, "the list", func(u Update) bool {
		return exactly("web")(u) && hasObjects("ConfigMap/default/cfg", "Secret/default/creds")(u)
	})
	for _, o := range u.Objects {
		if o.Kind == model.KindSecret && string(o.Secret.Data["password"]) != "hunter2" {
			t.Fatalf("base64 data decoded to %q", o.Secret.Data["password"])
		}
	}
}

// TestPushKindsDoNotShareFiles: a pod named like an object's file and the
// object live in different files; deleting one leaves the other.
func TestPushKindsDoNotShareFiles(t *testing.T) {
	s := NewPushSource("push", filepath.Join(t.TempDir(), "push"), Options{})
	srv := newPushServer(t, s)
	updates := startSource(t, s)
	await(t, updates, 5*time.Second, "empty start", exactly())
	if code, body := pushRequest(t, srv, "PUT", "/pods/default/cfg.configmap", podManifest("cfg.configmap", "nginx")); code != http.StatusCreated {
		t.Fatalf("PUT pod: %d %s", code, body)
	}
	if code, body := pushRequest(t, srv, "PUT", "/configmaps/default/cfg", cmManifest); code != http.StatusCreated {
		t.Fatalf("PUT configmap: %d %s", code, body)
	}
	await(t, updates, 5*time.Second, "both", func(u Update) bool {
		return exactly("cfg.configmap")(u) && hasObjects("ConfigMap/default/cfg")(u)
	})
	if code, body := pushRequest(t, srv, "DELETE", "/configmaps/default/cfg", ""); code != http.StatusOK {
		t.Fatalf("DELETE configmap: %d %s", code, body)
	}
	await(t, updates, 5*time.Second, "the pod alone", func(u Update) bool { return exactly("cfg.configmap")(u) && hasObjects()(u) })
}
