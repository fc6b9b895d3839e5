package kubeapi

import (
	"context"
	"strings"
	"testing"

	"net/http"
	"net/http/httptest"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/berth-dev/berth/store"
)

// Without the push source, a create is a 405 saying why, and discovery
// does not offer the verb.
func TestRefusedWritesSayWhy(t *testing.T) {
	st, _ := store.New(nil)
	a := New(Options{Store: st, Node: "n"})
	a.RefuseWrites("the push source is off (sources.push.enabled)")
	mux := http.NewServeMux()
	for _, rt := range a.Routes() {
		mux.Handle(rt.Pattern, rt.Handler)
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	cs := kubernetes.NewForConfigOrDie(&rest.Config{Host: srv.URL})
	_, err := cs.CoreV1().Pods("default").Create(context.Background(), &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	if !apierrors.IsMethodNotSupported(err) || !strings.Contains(err.Error(), "sources.push.enabled") {
		t.Fatalf("create: %v, want 405 naming sources.push.enabled", err)
	}
	res, err := cs.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.APIResources {
		if r.Name == "pods" {
			for _, v := range r.Verbs {
				if v == "create" || v == "delete" {
					t.Errorf("discovery offers %q on pods: %v", v, r.Verbs)
				}
			}
		}
	}
}
