package manifest

import (
	"strings"
	"testing"

	"github.com/berth-dev/berth/model"
)

// Pods of the public manifest corpus that a kubelet runs and
// berth once refused; each test names its source file.

// kubernetes/website content/en/examples/pods/emptydir-volume-mode.yaml:
// emptyDir.mode 01777 (a kubelet without the EmptyDirVolumeMode gate runs
// the pod with 0777, with it with the mode).
func TestCorpusEmptyDirMode(t *testing.T) {
	pods := decodeOK(t, `apiVersion: v1
kind: Pod
metadata:
  name: emptydir-mode-demo
spec:
  containers:
  - image: registry.k8s.io/busybox
    name: test-container
    command: ["sleep", "3600"]
    volumeMounts:
    - mountPath: /tmp
      name: tmp-volume
  volumes:
  - name: tmp-volume
    emptyDir:
      mode: 01777
`, Options{})
	if len(pods) != 1 {
		t.Fatalf("got %d pods", len(pods))
	}
	if m := pods[0].Pod.Spec.Volumes[0].EmptyDir.Mode; m == nil || *m != 0o1777 {
		t.Errorf("mode %v, want 01777", m)
	}
	if w := WarningLine(pods[0]); w != "" {
		t.Errorf("a mode berth applies draws a warning: %s", w)
	}
	for _, mode := range []string{"02777", "-1"} {
		errs := decodeErrs(t, `apiVersion: v1
kind: Pod
metadata:
  name: bad-mode
spec:
  containers:
  - name: c
    image: busybox
  volumes:
  - name: v
    emptyDir:
      mode: `+mode+"\n", Options{})
		if len(errs) != 1 || !strings.Contains(errs[0], "spec.volumes[0].emptyDir.mode: Invalid value") ||
			!strings.Contains(errs[0], "between 0 and 01777") {
			t.Errorf("mode %s: %q, want one error naming the field and the range", mode, errs)
		}
	}
}

// kubernetes/website content/en/examples/pods/inject/envars-file-container.yaml:
// env valueFrom.fileKeyRef, a key of an env file an init container writes
// into an emptyDir (the kubelet's EnvFiles, on by default since 1.35).
func TestCorpusEnvFile(t *testing.T) {
	pods := decodeOK(t, `apiVersion: v1
kind: Pod
metadata:
  name: envfile-test-pod
spec:
  initContainers:
    - name: setup-envfile
      image:  nginx
      command: ['sh', '-c', "echo \"DB_ADDRESS='address'\nREST_ENDPOINT='endpoint'\" > /data/config.env"]
      volumeMounts:
        - name: config
          mountPath: /data
  containers:
    - name: use-envfile
      image: nginx
      command: [ "/bin/sh", "-c", "env" ]
      env:
        - name: DB_ADDRESS
          valueFrom:
            fileKeyRef:
              path: config.env
              volumeName: config
              key: DB_ADDRESS
              optional: false
  restartPolicy: Never
  volumes:
    - name: config
      emptyDir: {}`, Options{})
	if len(pods) != 1 {
		t.Fatalf("got %d pods", len(pods))
	}
	if w := WarningLine(pods[0]); w != "" {
		t.Errorf("a fileKeyRef berth resolves draws a warning: %s", w)
	}
	cases := map[string]string{
		"volumeName: data":                        `fileKeyRef.volumeName: Not found: "data"`,
		"volumeName: host":                        `fileKeyRef.volumeName: Invalid value: "host": must name an emptyDir volume`,
		"volumeName: shm":                         `fileKeyRef.volumeName: Forbidden: not supported by berth (a Memory emptyDir`,
		"volumeName: config\n    path: /etc/x":    `fileKeyRef.path: Invalid value: "/etc/x": must be a relative path`,
		"volumeName: config\n    path: a/../../x": `fileKeyRef.path: Invalid value: "a/../../x": must not contain '..'`,
		"volumeName: config\n    key: A=B":        `fileKeyRef.key: Invalid value: "A=B": must consist of printable ASCII characters except '='`,
		"volumeName: config\n    key: \"\"":       `fileKeyRef.key: Required value`,
	}
	for sel, want := range cases {
		ref := "    path: config.env\n    key: K\n"
		if strings.Contains(sel, "path:") {
			ref = "    key: K\n"
		}
		if strings.Contains(sel, "key:") {
			ref = "    path: config.env\n"
		}
		errs := decodeErrs(t, `apiVersion: v1
kind: Pod
metadata:
  name: bad-envfile
spec:
  containers:
  - name: c
    image: busybox
    env:
    - name: K
      valueFrom:
        fileKeyRef:
          `+strings.ReplaceAll(sel+"\n"+ref, "\n    ", "\n          ")+`
  volumes:
  - name: config
    emptyDir: {}
  - name: shm
    emptyDir: {medium: Memory}
  - name: host
    hostPath: {path: /tmp}
`, Options{Level: model.LevelPrivileged})
		if len(errs) != 1 || !strings.Contains(errs[0], "spec.containers[0].env[0].valueFrom."+want) {
			t.Errorf("%s: %q\nwant one error %q", sel, errs, want)
		}
	}
}

// A Pod beside objects berth does not serve (a Service, a Deployment, a
// custom resource), as application files carry them: the Pod is decoded,
// each other document is skipped with a warning naming its kind, and none
// is an error. An unknown kind of the core API stays an error: most likely
// a misspelt Pod.
func TestOtherKindsSkipped(t *testing.T) {
	d := DecodeAll("test", "app.yaml", []byte(`apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  ports: [{port: 80}]
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: web, image: nginx}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
---
apiVersion: v1
kind: List
items:
- apiVersion: cert-manager.io/v1
  kind: Certificate
  metadata: {name: web}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: web}
`), Options{})
	if len(d.Errors) != 0 {
		t.Errorf("errors %v, want none", d.Errors)
	}
	if len(d.Pods) != 1 || len(d.Objects) != 1 {
		t.Errorf("%d pods and %d objects, want the Pod and the ConfigMap", len(d.Pods), len(d.Objects))
	}
	want := []string{
		"app.yaml: kind Service is not served by berth; skipped (document 1)",
		"app.yaml: kind Deployment (apps/v1) is not served by berth; skipped (document 3)",
		"app.yaml: items[0]: kind Certificate (cert-manager.io/v1) is not served by berth; skipped (document 4)",
	}
	if strings.Join(d.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(d.Warnings, "\n"), strings.Join(want, "\n"))
	}
	errs := decodeErrs(t, "apiVersion: v1\nkind: Pdo\nmetadata: {name: web}\n", Options{})
	if len(errs) != 1 || !strings.Contains(errs[0], `kind: Unsupported value: "Pdo"`) {
		t.Errorf("a misspelt core kind: %q, want an error", errs)
	}
}
