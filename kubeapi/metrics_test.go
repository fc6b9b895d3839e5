package kubeapi

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/berth-dev/berth/kubeapi/registry"
)

type fakeUsage struct {
	u   *Usage
	err error
}

func (f fakeUsage) Usage(context.Context) (*Usage, error) { return f.u, f.err }

func TestMetrics(t *testing.T) {
	f := newFixture(t, Options{Usage: fakeUsage{u: &Usage{
		Node: NodeUsage{Time: t0, Window: 10 * time.Second, CPUNanoCores: 250_000_000, MemoryBytes: 512 << 20, CPUKnown: true, MemoryKnown: true},
		Pods: []PodUsage{
			{Namespace: "default", Name: "web", UID: "uid-web", Source: "file", Time: t0, Window: 10 * time.Second, Containers: []ContainerUsage{{Name: "app", CPUNanoCores: 1_500_000, MemoryBytes: 10 << 20}}},
			{Namespace: "default", Name: "unknown", Time: t0},
		}}}})
	f.pod(t, "file", "default", "web", map[string]string{"app": "web"}, running("10.0.0.2"))
	ctx := context.Background()
	rc := f.cs.CoreV1().RESTClient()
	raw, err := rc.Get().AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods").Param("labelSelector", "app=web").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var pods struct {
		Kind  string                `json:"kind"`
		Items []registry.PodMetrics `json:"items"`
	}
	if err := json.Unmarshal(raw, &pods); err != nil || pods.Kind != "PodMetricsList" || len(pods.Items) != 1 {
		t.Fatalf("pod metrics %s (%v)", raw, err)
	}
	c := pods.Items[0].Containers[0]
	if c.Name != "app" || c.Usage.Cpu().MilliValue() != 2 || c.Usage.Cpu().ScaledValue(-9) != 1_500_000 || c.Usage.Memory().Value() != 10<<20 ||
		pods.Items[0].Window.Duration != 10*time.Second || !pods.Items[0].Timestamp.Time.Equal(t0) {
		t.Fatalf("pod metrics %s", raw)
	}
	raw, err = rc.Get().AbsPath("/apis/metrics.k8s.io/v1beta1/nodes/node1").DoRaw(ctx)
	var node registry.NodeMetrics
	if err != nil || json.Unmarshal(raw, &node) != nil || node.Usage.Cpu().MilliValue() != 250 || node.Usage.Memory().Value() != 512<<20 {
		t.Fatalf("node metrics %s (%v)", raw, err)
	}
	if _, err := rc.Get().AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/unknown").DoRaw(ctx); !apierrors.IsNotFound(err) {
		t.Fatalf("metrics of a pod not in the store: %v", err)
	}

	g := newFixture(t, Options{Usage: fakeUsage{err: errors.New("no cgroups")}})
	if _, err := g.cs.CoreV1().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/pods").DoRaw(ctx); !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("without stats: %v", err)
	}
}
