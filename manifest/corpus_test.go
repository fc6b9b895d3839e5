package manifest

import (
	"strings"
	"testing"
)

// Pods of the public manifest corpus (issue 22) that a kubelet runs and
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
