package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Pods of the public manifest corpus that a kubelet runs and
// berth once refused, run on the real engine.

// TestCorpusEmptyDirMode: emptyDir.mode (kubernetes/website
// pods/emptydir-volume-mode.yaml sets 01777) is the mode the container sees
// on a disk emptyDir and on a Memory one.
func TestCorpusEmptyDirMode(t *testing.T) {
	b := startBerth(t, Options{})
	writeFile(t, b.Pods, "mode.yaml", `apiVersion: v1
kind: Pod
metadata: {name: emptydir-mode}
spec:
  terminationGracePeriodSeconds: 2
  containers:
    - name: app
      image: `+strconv.Quote(testImage)+`
      args: [report, --sleep, --stat, /tmp-vol, --stat, /shm]
      volumeMounts:
        - {name: tmp-volume, mountPath: /tmp-vol}
        - {name: shm, mountPath: /shm}
  volumes:
    - name: tmp-volume
      emptyDir: {mode: 01777}
    - name: shm
      emptyDir: {medium: Memory, mode: 0700}
`)
	r := fidReportOf(t, b, "emptydir-mode", "app", time.Now().Add(waitLong))
	if st := r.Stats["/tmp-vol"]; st.Err != "" || !st.IsDir || st.Perm != 0o1777 {
		t.Errorf("disk emptyDir: %+v, want a directory of mode 01777", st)
	}
	if st := r.Stats["/shm"]; st.Err != "" || !st.IsDir || st.Perm != 0o700 {
		t.Errorf("Memory emptyDir: %+v, want a directory of mode 0700", st)
	}
}

// TestCorpusEnvFile: env valueFrom.fileKeyRef (kubernetes/website
// pods/inject/envars-file-container.yaml) reads the env file an init
// container wrote in an emptyDir; a container whose file never comes waits
// with CreateContainerConfigError naming the file.
func TestCorpusEnvFile(t *testing.T) {
	b := startBerth(t, Options{})
	img := strconv.Quote(testImage)
	writeFile(t, b.Pods, "envfile.yaml", `apiVersion: v1
kind: Pod
metadata: {name: envfile}
spec:
  terminationGracePeriodSeconds: 2
  initContainers:
    - name: setup-envfile
      image: `+img+`
      args: [report, --write, "/data/config.env=DB_ADDRESS='address'\nREST_ENDPOINT='end point'\n"]
      volumeMounts: [{name: config, mountPath: /data}]
  containers:
    - name: use-envfile
      image: `+img+`
      args: [report, --sleep]
      env:
        - name: DB_ADDRESS
          valueFrom: {fileKeyRef: {path: config.env, volumeName: config, key: DB_ADDRESS, optional: false}}
        - name: REST_ENDPOINT
          valueFrom: {fileKeyRef: {path: config.env, volumeName: config, key: REST_ENDPOINT}}
        - name: ABSENT
          valueFrom: {fileKeyRef: {path: config.env, volumeName: config, key: ABSENT, optional: true}}
  volumes:
    - {name: config, emptyDir: {}}
---
apiVersion: v1
kind: Pod
metadata: {name: envfile-missing}
spec:
  terminationGracePeriodSeconds: 2
  containers:
    - name: app
      image: `+img+`
      args: [report, --sleep]
      env:
        - name: X
          valueFrom: {fileKeyRef: {path: never.env, volumeName: config, key: X}}
  volumes:
    - {name: config, emptyDir: {}}
`)
	deadline := time.Now().Add(waitLong)
	r := fidReportOf(t, b, "envfile", "use-envfile", deadline)
	env := r.env()
	if env["DB_ADDRESS"] != "address" || env["REST_ENDPOINT"] != "end point" {
		t.Errorf("env %v, want DB_ADDRESS=address and REST_ENDPOINT=end point from the file", env)
	}
	if v, set := env["ABSENT"]; set {
		t.Errorf("an optional missing key is set: %q", v)
	}
	fidPod(t, b, "envfile-missing", deadline, "app waiting with CreateContainerConfigError on never.env", func(p *v1.Pod) bool {
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && w.Reason == "CreateContainerConfigError" && strings.Contains(w.Message, "never.env") {
				return true
			}
		}
		return false
	})
}
