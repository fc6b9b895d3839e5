package kubeapi

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDiscovery(t *testing.T) {
	f := newFixture(t, Options{Version: "0.9.1-3-gabc"})
	// The write and stream parts add routes: discovery lists their verbs.
	f.api.handle("POST /api/v1/namespaces/{ns}/pods", AccessWrite, func(http.ResponseWriter, *http.Request) {})
	f.api.handle("/api/v1/namespaces/{namespace}/pods/{name}/exec", AccessExec, func(http.ResponseWriter, *http.Request) {})
	v, err := f.cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.Major != "1" || v.Minor != "37" || !strings.HasPrefix(v.GitVersion, "v1.37.") || !strings.HasSuffix(v.GitVersion, "-berth+0.9.1-3-gabc") {
		t.Fatalf("version %+v", v)
	}
	// client-go asks for the aggregated discovery first and falls back.
	groups, lists, err := f.cs.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range groups {
		names = append(names, g.Name)
	}
	if !slices.Equal(names, []string{"", "coordination.k8s.io", "metrics.k8s.io"}) {
		t.Fatalf("groups %q", names)
	}
	found := map[string]string{}
	for _, l := range lists {
		for _, r := range l.APIResources {
			found[l.GroupVersion+" "+r.Name] = strings.Join(r.ShortNames, ",") + " " + strings.Join(r.Verbs, ",")
		}
	}
	for k, want := range map[string]string{
		"v1 pods":                      "po create,get,list,watch",
		"v1 pods/exec":                 " create,get",
		"v1 pods/status":               " get",
		"v1 events":                    "ev get,list,watch",
		"v1 nodes":                     "no get,list,watch",
		"v1 configmaps":                "cm get,list,watch",
		"v1 secrets":                   " get,list,watch",
		"v1 persistentvolumeclaims":    "pvc get,list,watch",
		"metrics.k8s.io/v1beta1 pods":  " get,list,watch",
		"metrics.k8s.io/v1beta1 nodes": " get,list,watch",
	} {
		if found[k] != want {
			t.Errorf("%s: %q, want %q", k, found[k], want)
		}
	}
	if _, ok := found["v1 pods/log"]; ok {
		t.Error("pods/log listed without a route")
	}
	m, err := f.cs.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range m.APIResources {
		if r.Name == "pods" && (!slices.Equal(r.Categories, []string{"all"}) || !r.Namespaced || r.Kind != "Pod") {
			t.Fatalf("pods resource %+v", r)
		}
		if r.Name == "nodes" && r.Namespaced {
			t.Fatal("nodes namespaced")
		}
	}
	// The node's lease, which kubectl describe node shows.
	l, err := f.cs.CoordinationV1().Leases("kube-node-lease").Get(t.Context(), "node1", metav1.GetOptions{})
	if err != nil || *l.Spec.HolderIdentity != "node1" || l.Spec.RenewTime == nil {
		t.Fatalf("lease: %+v %v", l, err)
	}
	// An unserved group is a 404 Status.
	_, err = f.cs.AppsV1().Deployments("default").Get(t.Context(), "x", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("deployment: %v", err)
	}
}
