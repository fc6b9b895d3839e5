package podview

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/model"
)

// The served pod carries the apiserver's defaults that clients dereference
// (kubectl debug reads spec.securityContext), without touching the store.
func TestPodHasAPIServerDefaults(t *testing.T) {
	p := &model.Pod{Key: "default/a", Spec: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default"}}}
	out := Pod(p, "n")
	if out.Spec.SecurityContext == nil {
		t.Fatal("spec.securityContext is nil; the apiserver serves {}")
	}
	if p.Spec.Spec.SecurityContext != nil {
		t.Fatal("Pod changed the stored pod")
	}
}
