package cluster

import (
	"context"
	"maps"
	"testing"
)

func TestNodeLabels(t *testing.T) {
	labels := map[string]string{"disk": "ssd", "kubernetes.io/hostname": "stale"}
	r := NewNodeReporter(HostInfo{Name: "n1", OS: "linux", Arch: "arm64", Labels: labels}, nil, nil)
	got := r.Node(context.Background(), 0).Labels
	want := map[string]string{"disk": "ssd", "kubernetes.io/hostname": "n1", "kubernetes.io/os": "linux", "kubernetes.io/arch": "arm64"}
	if !maps.Equal(got, want) {
		t.Fatalf("labels %v, want %v", got, want)
	}
	got["disk"] = "hdd"
	if labels["disk"] != "ssd" || labels["kubernetes.io/hostname"] != "stale" {
		t.Fatalf("the node object shares the configured map: %v", labels)
	}
	bare := NewNodeReporter(HostInfo{Name: "n2", OS: "linux", Arch: "amd64"}, nil, nil).Node(context.Background(), 0).Labels
	if len(bare) != 3 || bare["kubernetes.io/hostname"] != "n2" {
		t.Fatalf("labels without configured ones: %v", bare)
	}
}
