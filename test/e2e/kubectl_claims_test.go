package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// claimsFile is an ordinary application file: a ConfigMap, the claim its
// pod mounts, and the pod.
func claimsFile(claim, pod string) string {
	return `apiVersion: v1
kind: ConfigMap
metadata: {name: ` + pod + `-conf}
data: {greeting: hello}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: ` + claim + `}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: ` + pod + `}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ` + testImage + `
      args: [sleep]
      volumeMounts:
        - {name: data, mountPath: /data}
        - {name: conf, mountPath: /conf}
  volumes:
    - {name: data, persistentVolumeClaim: {claimName: ` + claim + `}}
    - {name: conf, configMap: {name: ` + pod + `-conf}}
`
}

// TestKubectlClaims applies files holding claims with the real kubectl
// and reads the claims back as kubectl prints them: Pending until a pod
// made the claim's volume, then Bound to it, the binding a change a watch
// and kubectl wait see.
func TestKubectlClaims(t *testing.T) {
	k := startKubectlEnv(t, "BERTH_SOURCES_PUSH_ENABLED=true")
	dir, manifest := manifestDir(t)

	t.Run("apply a file of a ConfigMap, a claim and a pod", func(t *testing.T) {
		full := claimsFile("data", "db")
		claimOnly := strings.Split(full, "---\n")[1]
		r := k.ok(t, "apply", "-f", manifest("claim.yaml", claimOnly))
		if r.stdout != "persistentvolumeclaim/data created\n" {
			t.Errorf("apply of the claim: %s", r)
		}
		r = k.ok(t, "get", "pvc", "data")
		if rows := table(r.stdout); len(rows) != 2 {
			t.Fatalf("get pvc: %s", r)
		} else {
			wantRow(t, "the claim before its pod", rows[1][:2], []string{"data", "Pending"})
		}
		watch := k.start(t, "get", "pvc", "data", "-w", "--output-watch-events")
		watch.waitLine(t, "the watch's first line", func(l string) bool { return strings.Contains(l, "Pending") })

		r = k.run(t, "", "apply", "-f", manifest("app.yaml", full))
		want := "configmap/db-conf created\npersistentvolumeclaim/data unchanged\npod/db created\n"
		if r.code != 0 || r.stdout != want {
			t.Fatalf("apply of the file, want\n%s: %s", want, r)
		}
		r = k.run(t, "", "wait", "--for=jsonpath={.status.phase}=Bound", "pvc/data", "--timeout=60s")
		if r.code != 0 || r.stdout != "persistentvolumeclaim/data condition met\n" {
			t.Fatalf("wait for Bound: %s", r)
		}
		watch.waitLine(t, "the binding as a MODIFIED", func(l string) bool {
			return strings.HasPrefix(l, "MODIFIED") && strings.Contains(l, "Bound")
		})
		volume := "berth-pvc_push_default_data_" + k.b.Node
		r = k.ok(t, "get", "pvc", "data")
		if rows := table(r.stdout); len(rows) != 2 {
			t.Fatalf("get pvc: %s", r)
		} else {
			wantRow(t, "the bound claim", rows[1][:5], []string{"data", "Bound", volume, "1Gi", "RWO"})
		}
		r = k.ok(t, "get", "pvc", "data", "-o", "jsonpath={.spec.volumeName} {.status.capacity.storage} {.status.accessModes}")
		if r.stdout != volume+` 1Gi ["ReadWriteOnce"]` {
			t.Errorf("served claim: %s", r)
		}
		if r := k.ok(t, "apply", "-f", filepath.Join(dir, "app.yaml")); r.stdout != "configmap/db-conf unchanged\npersistentvolumeclaim/data unchanged\npod/db unchanged\n" {
			t.Errorf("apply again: %s", r)
		}
		if r := k.ok(t, "label", "pvc", "data", "tier=db"); r.stdout != "persistentvolumeclaim/data labeled\n" {
			t.Errorf("label: %s", r)
		}
		if r := k.ok(t, "patch", "pvc", "data", "--type=merge", "-p", `{"metadata":{"annotations":{"note":"kept"}}}`); r.stdout != "persistentvolumeclaim/data patched\n" {
			t.Errorf("patch: %s", r)
		}
		r = k.ok(t, "get", "pvc", "data", "-o", "jsonpath={.metadata.labels.tier} {.metadata.annotations.note} {.status.phase}")
		if r.stdout != "db kept Bound" {
			t.Errorf("after label and patch: %s", r)
		}
		// The claim as served, spec.volumeName included, is written back.
		exported := k.ok(t, "get", "pvc", "data", "-o", "yaml").stdout
		if !strings.Contains(exported, "volumeName: "+volume) || !strings.Contains(exported, "tier: db") {
			t.Fatalf("exported claim:\n%s", exported)
		}
		if r := k.run(t, strings.Replace(exported, "tier: db", "tier: cache", 1), "replace", "-f", "-"); r.code != 0 || r.stdout != "persistentvolumeclaim/data replaced\n" {
			t.Errorf("get -o yaml | replace -f -: %s", r)
		}
		r = k.ok(t, "get", "pvc", "data", "-o", "jsonpath={.metadata.labels.tier} {.status.phase} {.spec.volumeName}")
		if r.stdout != "cache Bound "+volume {
			t.Errorf("after the replace: %s", r)
		}
		k.ok(t, "delete", "pod", "db", "--wait=false")
		waitPodGone(t, k.b.Node, "db")
		if r := k.ok(t, "delete", "pvc", "data"); r.stdout != `persistentvolumeclaim "data" deleted from default namespace`+"\n" {
			t.Errorf("delete: %s", r)
		}
		if r := k.run(t, "", "get", "pvc", "data"); r.code != 1 || !strings.Contains(r.stderr, "(NotFound)") {
			t.Errorf("after delete: %s", r)
		}
		// Created again from its export: Bound at once to the volume kept.
		exported = strings.Replace(exported, "tier: db", "tier: cache", 1)
		if r := k.run(t, exported, "create", "-f", "-"); r.code != 0 || r.stdout != "persistentvolumeclaim/data created\n" {
			t.Errorf("create -f of the exported claim: %s", r)
		}
		r = k.run(t, "", "wait", "--for=jsonpath={.status.phase}=Bound", "pvc/data", "--timeout=30s")
		if r.code != 0 {
			t.Errorf("the claim created again: %s", r)
		}
		k.ok(t, "delete", "pvc", "data")
	})

	t.Run("a kind berth does not serve fails alone", func(t *testing.T) {
		file := `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: ` + testImage + `}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: mixed}
data: {a: b}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: mixed}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`
		r := k.run(t, "", "apply", "-f", manifest("mixed.yaml", file))
		if r.code == 0 || r.stdout != "configmap/mixed created\npersistentvolumeclaim/mixed created\n" ||
			!strings.Contains(r.stderr, `no matches for kind "Deployment" in version "apps/v1"`) ||
			!strings.Contains(r.stderr, `no matches for kind "Service" in version "v1"`) || strings.Contains(r.stderr, "openapi") {
			t.Errorf("want the ConfigMap and the claim applied, kubectl's own error for the Deployment and the Service: %s", r)
		}
		k.ok(t, "get", "configmap", "mixed")
		if r := k.ok(t, "get", "pvc", "mixed", "-o", "jsonpath={.status.phase}"); r.stdout != "Pending" {
			t.Errorf("the claim no pod uses: %s", r)
		}
	})
}
