package kubeapi

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/berth-dev/berth/kubeapi/registry"
)

// TestPodMetricsFollowIncarnation: a pod's metrics come only from the
// containers of its own UID and source. A push pod that took the name of
// a removed file pod, whose containers still stop, never sees their names
// or usage, listed or got, by any token.
func TestPodMetricsFollowIncarnation(t *testing.T) {
	f := newFixture(t, Options{Usage: fakeUsage{u: &Usage{Pods: []PodUsage{
		{Namespace: "default", Name: "web", UID: "uid-trusted", Source: "file", Time: t0, Window: 10 * time.Second,
			Containers: []ContainerUsage{{Name: "vault-agent", CPUNanoCores: 900_000_000, MemoryBytes: 900 << 20}}},
		{Namespace: "default", Name: "web", UID: "uid-web", Source: "file", Time: t0, Window: 10 * time.Second,
			Containers: []ContainerUsage{{Name: "same-uid-other-source", CPUNanoCores: 1, MemoryBytes: 1}}},
		{Namespace: "default", Name: "web", UID: "uid-web", Source: "push", Time: t0, Window: 10 * time.Second,
			Containers: []ContainerUsage{{Name: "app", CPUNanoCores: 1_000_000, MemoryBytes: 1 << 20}}},
	}}}})
	f.pod(t, "push", "default", "web", nil, running("10.0.0.2"))
	ctx := context.Background()
	rc := f.cs.CoreV1().RESTClient()
	check := func(what string, m registry.PodMetrics) {
		t.Helper()
		if len(m.Containers) != 1 || m.Containers[0].Name != "app" || m.Containers[0].Usage.Memory().Value() != 1<<20 {
			t.Errorf("%s: containers %+v, want app only", what, m.Containers)
		}
	}
	raw, err := rc.Get().AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods").DoRaw(ctx)
	var list registry.PodMetricsList
	if err != nil || json.Unmarshal(raw, &list) != nil || len(list.Items) != 1 {
		t.Fatalf("list: %s (%v)", raw, err)
	}
	check("list", list.Items[0])
	raw, err = rc.Get().AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web").DoRaw(ctx)
	var one registry.PodMetrics
	if err != nil || json.Unmarshal(raw, &one) != nil {
		t.Fatalf("get: %s (%v)", raw, err)
	}
	check("get", one)
}
