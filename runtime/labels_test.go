package runtime

import (
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Encode and DecodeLabels are inverses, for the labels of a sandbox (no
// optional label) and of an app container (all of them).
func TestLabelsRoundTrip(t *testing.T) {
	grace, sidecar := int64(30), 2
	for _, l := range []ContainerLabels{
		{Namespace: "default", Pod: "web", PodUID: "u1", Container: "POD", Hash: "h", Source: "file", Node: "n1", GracePeriod: &grace},
		{Namespace: "default", Pod: "web", PodUID: "u1", Container: "app", Hash: "h2", Source: "etcd", Node: "n1",
			Attempt: 3, RestartCount: 2, GracePeriod: &grace, HostNetwork: true, Sandbox: "sb1",
			PreStop: &PreStop{Handler: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/quit", Port: intstr.FromString("http")}},
				Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 8080}}}, Sidecar: &sidecar,
			PodCreated: time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)},
	} {
		m := l.Encode()
		if m[LabelManaged] != "true" {
			t.Errorf("%s: not labelled managed: %v", l.Container, m)
		}
		got, err := DecodeLabels(m)
		if err != nil || !reflect.DeepEqual(got, l) {
			t.Errorf("%s: decoded %+v (%v), want %+v", l.Container, got, err, l)
		}
	}
	if m := (ContainerLabels{}).Encode(); m[LabelGracePeriod] != "" || m[LabelHostNetwork] != "" || m[LabelSandbox] != "" || m[LabelPreStop] != "" || m[LabelSidecar] != "" || m[LabelPodCreated] != "" {
		t.Errorf("unset optional labels encoded: %v", m)
	}
}

// A malformed value is an error naming its label, left at its zero value;
// the other labels are still decoded.
func TestDecodeMalformedLabels(t *testing.T) {
	for key, v := range map[string]string{LabelAttempt: "x", LabelRestartCount: "", LabelGracePeriod: "-1",
		LabelHostNetwork: "yes", LabelPreStop: "{", LabelSidecar: "-1", LabelPodCreated: "yesterday", "": ""} {
		labels := map[string]string{LabelPodName: "web", LabelAttempt: "1", LabelRestartCount: "2", LabelGracePeriod: "5",
			LabelHostNetwork: "true", LabelPreStop: `{"h":{"exec":{"command":["true"]}}}`, LabelSidecar: "1"}
		if key != "" {
			labels[key] = v
		}
		l, err := DecodeLabels(labels)
		if key == "" {
			if err != nil || l.Attempt != 1 || l.RestartCount != 2 || *l.GracePeriod != 5 || !l.HostNetwork || l.PreStop == nil || *l.Sidecar != 1 {
				t.Errorf("well-formed labels: %+v %v", l, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%q: err %v, want one naming the label", key, v, err)
		}
		if l.Pod != "web" {
			t.Errorf("%s=%q: the other labels were not decoded: %+v", key, v, l)
		}
		zero := map[string]bool{
			LabelAttempt: l.Attempt == 0, LabelRestartCount: l.RestartCount == 0, LabelGracePeriod: l.GracePeriod == nil,
			LabelHostNetwork: !l.HostNetwork, LabelPreStop: l.PreStop == nil, LabelSidecar: l.Sidecar == nil,
			LabelPodCreated: l.PodCreated.IsZero(),
		}
		if !zero[key] {
			t.Errorf("%s=%q: malformed value decoded: %+v", key, v, l)
		}
	}
	if _, err := DecodeLabels(map[string]string{LabelPreStop: `{"p":[]}`}); err == nil {
		t.Error("a preStop label without a handler decoded")
	}
}
