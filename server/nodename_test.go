package server

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

// Served pods are bound to the node; the stored pod is left as it was.
func TestServedPodsCarryNodeName(t *testing.T) {
	st, _ := store.New(nil)
	spec := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}}
	_ = st.UpsertPod(&model.Pod{Key: "default/web", Source: "file", Spec: spec})
	srv := httptest.NewServer(New(Options{Store: st, Node: "n1"}))
	t.Cleanup(srv.Close)

	var list v1.PodList
	if err := json.NewDecoder(get(t, srv.URL+"/pods", "").Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Spec.NodeName != "n1" {
		t.Fatalf("list %+v", list.Items)
	}
	var one v1.Pod
	if err := json.NewDecoder(get(t, srv.URL+"/pods/default/web", "").Body).Decode(&one); err != nil {
		t.Fatal(err)
	}
	if one.Spec.NodeName != "n1" {
		t.Fatalf("pod nodeName %q", one.Spec.NodeName)
	}
	if spec.Spec.NodeName != "" {
		t.Fatal("the stored pod was modified")
	}
}
