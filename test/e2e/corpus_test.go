package e2e

import (
	"strconv"
	"testing"
	"time"
)

// Pods of the public manifest corpus (issue 22) that a kubelet runs and
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
