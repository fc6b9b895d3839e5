package kubeapi

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/sources"
)

// TestWriteOverQuotaIsForbidden: a create over the push source's quota is
// the apiserver's ResourceQuota refusal, 403 Forbidden naming the quota,
// dry run included; the objects within it stay served.
func TestWriteOverQuotaIsForbidden(t *testing.T) {
	f := newWriteFixtureSource(t, sources.Options{Quota: sources.Quota{Objects: 1}})
	cms := f.cs.CoreV1().ConfigMaps("default")
	cm := func(name string) *v1.ConfigMap {
		return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}
	}
	if _, err := cms.Create(bg, cm("first"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create within the quota: %v", err)
	}
	want := `configmaps "second" is forbidden: exceeded quota: push, requested: objects=1, used: objects=1, limited: objects=1`
	for _, opts := range []metav1.CreateOptions{{DryRun: []string{metav1.DryRunAll}}, {}} {
		_, err := cms.Create(bg, cm("second"), opts)
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Fatalf("create over the quota (dry run %v): %v, want Forbidden %q", opts.DryRun, err, want)
		}
	}
	if _, err := cms.Get(bg, "first", metav1.GetOptions{}); err != nil {
		t.Fatalf("the object within the quota: %v", err)
	}
	if _, err := cms.Get(bg, "second", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the refused object: %v", err)
	}
}
