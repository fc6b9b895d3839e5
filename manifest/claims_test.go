package manifest

import (
	"strings"
	"testing"

	"github.com/berth-dev/berth/model"
)

const claimYAML = `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
  storageClassName: standard
---
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers: [{name: c, image: postgres, volumeMounts: [{name: d, mountPath: /var/lib/postgresql/data}]}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: data, readOnly: true}}]
`

// TestClaimsDecoded: a claim beside the pod that mounts it; the pod's use
// is a reference to the claim.
func TestClaimsDecoded(t *testing.T) {
	d := DecodeAll("file", "db.yaml", []byte(claimYAML), Options{})
	if len(d.Errors) > 0 {
		t.Fatalf("errors: %v", d.Errors)
	}
	if len(d.Objects) != 1 || d.Objects[0].Kind != model.KindPVC || d.Objects[0].Key() != "default/data" {
		t.Fatalf("objects %+v", d.Objects)
	}
	if len(d.Pods) != 1 {
		t.Fatalf("pods %d", len(d.Pods))
	}
	refs := RefKeys(d.Pods[0].Pod)
	if len(refs) != 1 || refs[0] != "PersistentVolumeClaim/default/data" {
		t.Fatalf("refs %v", refs)
	}
}

// TestClaimsRefused: what a node-local claim cannot be is refused by field.
func TestClaimsRefused(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n  volumeName: pv-1", "spec.volumeName"},
		{"accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n  dataSource: {kind: VolumeSnapshot, name: s}", "spec.dataSource"},
		{"resources: {requests: {storage: 1Gi}}", "spec.accessModes"},
		{"accessModes: [ReadWriteSometimes]\n  resources: {requests: {storage: 1Gi}}", "spec.accessModes[0]"},
		{"accessModes: [ReadWriteOnce]", "spec.resources.requests[storage]"},
		{"accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n  volumeMode: Block", "spec.volumeMode"},
	} {
		y := "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec:\n  " + tc.spec + "\n"
		d := DecodeAll("file", "c.yaml", []byte(y), Options{})
		if len(d.Objects) != 0 || len(d.Errors) == 0 || !strings.Contains(d.Errors[0].Error(), tc.want) {
			t.Errorf("%s: objects %d, errors %v; want an error naming %s", tc.spec, len(d.Objects), d.Errors, tc.want)
		}
	}
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n  volumes: [{name: d, persistentVolumeClaim: {claimName: ''}}]\n"
	if d := DecodeAll("file", "p.yaml", []byte(pod), Options{}); len(d.Errors) == 0 || !strings.Contains(d.Errors[0].Error(), "persistentVolumeClaim.claimName") {
		t.Errorf("an empty claimName: %v", d.Errors)
	}
}
