package sources

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
)

// TestPushStoresOneObjectAsDecoded: what the push routes persist is the one
// object they decoded, whatever form the body had: a Secret sent in a List
// with stringData is stored as the Secret, its value in data.
func TestPushStoresOneObjectAsDecoded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "push")
	s := NewPushSource("push", dir, Options{})
	srv := newPushServer(t, s)
	list := `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Secret",` +
		`"metadata":{"name":"s","namespace":"default"},"stringData":{"pw":"hunter2"}}]}`
	req, _ := http.NewRequest("PUT", srv.URL+"/secrets/default/s", strings.NewReader(list))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT the List: %s", resp.Status)
	}
	data, err := os.ReadFile(filepath.Join(dir, "default_s_secret.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	if !strings.HasPrefix(got, "apiVersion: v1\n") || !strings.Contains(got, "\nkind: Secret\n") || strings.Contains(got, "List") ||
		strings.Contains(got, "stringData") || !strings.Contains(got, "pw: "+base64.StdEncoding.EncodeToString([]byte("hunter2"))) {
		t.Errorf("persisted:\n%s\nwant the one Secret, its value in data", got)
	}
	if cur, err := s.Manifest(model.KindSecret, "default", "s"); err != nil || string(cur) != got {
		t.Errorf("Manifest: %q %v, want the file", cur, err)
	}
}

// TestPushQuotaChargesExpandedAliases: the bytes quota charges what the
// source holds, not the YAML as sent: 1.3 KB of YAML whose aliases repeat a
// 1 000-byte value ten times is charged its 10 KB.
func TestPushQuotaChargesExpandedAliases(t *testing.T) {
	s := NewPushSource("push", filepath.Join(t.TempDir(), "push"), Options{Quota: Quota{Bytes: 8000}})
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: default\ndata:\n  k0: &v \"" + strings.Repeat("x", 1000) + "\"\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "  k%d: *v\n", i)
	}
	_, err := s.Put(model.KindConfigMap, "default", "a", []byte(b.String()), PutOptions{})
	if pushCode(err) != http.StatusForbidden || !strings.Contains(err.Error(), "exceeded quota") {
		t.Fatalf("%d bytes of YAML expanding to 10 KB under an 8 000-byte quota: %v, want 403", b.Len(), err)
	}
	// Written out once, the value fits.
	if _, err := s.Put(model.KindConfigMap, "default", "a", namedCM("a", 1000), PutOptions{}); err != nil {
		t.Fatalf("the value once: %v", err)
	}
}

// TestPushCanonicalRoundTrip: the manifest persisted for a pushed object
// decodes to the object pushed (equal as Kubernetes compares them: a
// quantity's cached text aside), pods keeping their UID (declared, derived
// or none) and legacy manifests their conversion.
func TestPushCanonicalRoundTrip(t *testing.T) {
	bodies := map[string]string{
		"web":       "../examples/pods/web.yaml",
		"legacy":    "../examples/pods/legacy.yaml",
		"declared":  nsPod("default", "declared", "img:1") + "", // uid added below
		"podlist":   "apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: podlist, namespace: default}\n  spec: {containers: [{name: c, image: 'img:latest'}]}\n",
		"aliased":   "apiVersion: v1\nkind: Pod\nmetadata: {name: aliased, labels: &l {a: b}, annotations: *l}\nspec:\n  containers: [{name: c, image: i, env: &e [{name: X, value: '1'}]}, {name: d, image: i, env: *e}]\n",
		"configmap": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: configmap}\ndata: {a: b}\nbinaryData: {c: " + base64.StdEncoding.EncodeToString([]byte{0, 1, 2}) + "}\n",
		"secret":    "apiVersion: v1\nkind: Secret\nmetadata: {name: secret}\ntype: kubernetes.io/basic-auth\nstringData: {username: u, password: p}\n",
		"hostnet":   "apiVersion: v1\nkind: Pod\nmetadata: {name: hostnet}\nspec: {hostNetwork: true, containers: [{name: c, image: i, ports: [{containerPort: 8080}]}]}\n",
		"probes":    "apiVersion: v1\nkind: Pod\nmetadata: {name: probes}\nspec:\n  containers:\n  - name: c\n    image: i\n    livenessProbe: {httpGet: {port: 80}}\n    resources: {limits: {memory: 64Mi, cpu: 250m}}\n",
		"volumes":   "apiVersion: v1\nkind: Pod\nmetadata: {name: volumes}\nspec:\n  volumes: [{name: v}, {name: s, secret: {secretName: x}}]\n  containers: [{name: c, image: i, volumeMounts: [{name: v, mountPath: /v}]}]\n",
	}
	bodies["declared"] = strings.Replace(bodies["declared"], "  namespace: default\n", "  namespace: default\n  uid: 6f1c3e2a-0000-4000-8000-00000000abcd\n", 1)
	for _, derive := range []bool{false, true} {
		opts := Options{Options: manifest.Options{DeriveUIDs: derive, Level: model.LevelPrivileged}}
		s := NewPushSource("push", filepath.Join(t.TempDir(), "push"), opts)
		stored := map[string]string{} // key → kind
		for name, body := range bodies {
			data := []byte(body)
			if strings.HasPrefix(body, "../") {
				var err error
				if data, err = os.ReadFile(body); err != nil {
					t.Fatal(err)
				}
			}
			want := manifest.DecodeAll("push", "want", data, opts.Options)
			if len(want.Errors) > 0 || len(want.Pods)+len(want.Objects) == 0 {
				t.Fatalf("%s: %v", name, want.Errors)
			}
			for _, d := range want.Pods {
				if _, err := s.Put("Pod", d.Pod.Namespace, d.Pod.Name, data, PutOptions{}); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				stored[d.Pod.Namespace+"/"+d.Pod.Name] = "Pod"
			}
			for _, o := range want.Objects {
				if o.Kind == model.KindPVC {
					continue
				}
				ns, n, _ := strings.Cut(o.Key(), "/")
				if _, err := s.Put(o.Kind, ns, n, data, PutOptions{}); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				stored[o.Key()] = o.Kind
			}
		}
		u := s.scan()
		pods := map[string]manifest.Desired{}
		for _, d := range u.Pods {
			pods[d.Pod.Namespace+"/"+d.Pod.Name] = d
		}
		for name, body := range bodies {
			data := []byte(body)
			if strings.HasPrefix(body, "../") {
				data, _ = os.ReadFile(body)
			}
			want := manifest.DecodeAll("push", "want", data, opts.Options)
			for _, d := range want.Pods {
				got, ok := pods[d.Pod.Namespace+"/"+d.Pod.Name]
				if !ok || !equality.Semantic.DeepEqual(got.Pod, d.Pod) || got.DeclaredUID != d.DeclaredUID {
					file, _ := os.ReadFile(filepath.Join(s.dir, d.Pod.Namespace+"_"+d.Pod.Name+".yaml"))
					t.Errorf("derive %v, %s: the stored pod differs from the pushed one:\n%+v\n%+v\nstored:\n%s", derive, name, got.Pod, d.Pod, file)
				}
			}
			for _, o := range want.Objects {
				if o.Kind == model.KindPVC {
					continue
				}
				found := false
				for _, g := range u.Objects {
					if g.Kind == o.Kind && g.Key() == o.Key() {
						found = true
						g.Origin = o.Origin
						if !equality.Semantic.DeepEqual(g, o) {
							t.Errorf("derive %v, %s: the stored %s differs:\n%+v\n%+v", derive, name, o.Kind, g, o)
						}
					}
				}
				if !found {
					t.Errorf("derive %v, %s: %s %s not stored", derive, name, o.Kind, o.Key())
				}
			}
		}
		// Read back and stored again, each file stays as it is.
		for key, kind := range stored {
			ns, n, _ := strings.Cut(key, "/")
			cur, err := s.Manifest(kind, ns, n)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Put(kind, ns, n, cur, PutOptions{Base: cur, Replace: true}); err != nil {
				t.Fatalf("%s %s stored again: %v", kind, key, err)
			}
			if again, err := s.Manifest(kind, ns, n); err != nil || !bytes.Equal(again, cur) {
				t.Errorf("%s %s changed when stored again:\n%s\n%s", kind, key, cur, again)
			}
		}
	}
}
