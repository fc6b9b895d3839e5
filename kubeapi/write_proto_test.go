package kubeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// protoBody is obj as client-go's typed clients send it.
func protoBody(t *testing.T, obj interface {
	runtime.Object
	Marshal() ([]byte, error)
}, kind string) []byte {
	t.Helper()
	raw, err := obj.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	unk := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: kind}, Raw: raw}
	b, err := unk.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte("k8s\x00"), b...)
}

// richPod is a pod using maps, quantities, inlined handlers, int-or-strings
// and repeated scalars, with env variables each.
func richPod(env int) *v1.Pod {
	var vars []v1.EnvVar
	for i := range env {
		vars = append(vars, v1.EnvVar{Name: fmt.Sprintf("V%d", i), Value: "x"})
	}
	g := int64(30)
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rich", Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"}},
		Spec: v1.PodSpec{
			TerminationGracePeriodSeconds: &g,
			SecurityContext:               &v1.PodSecurityContext{SupplementalGroups: []int64{1, 2, 3}},
			Volumes:                       []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}},
			Containers: []v1.Container{{Name: "c", Image: "i", Env: vars, Args: []string{"a", "b"},
				Ports:     []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}},
				Resources: v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: apiresource.MustParse("64Mi")}},
				LivenessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromInt32(80),
					HTTPHeaders: []v1.HTTPHeader{{Name: "h", Value: "v"}}}}}}},
		}}
}

// TestProtobufWalkTakesRealObjects: the walk lets through what client-go
// sends, a list at the limit included, and decoding gives the object.
func TestProtobufWalkTakesRealObjects(t *testing.T) {
	pod := richPod(maxPatchListItems)
	body := protoBody(t, pod, "Pod")
	k := New(Options{}).writeKinds()[0]
	j, err := fromProtobuf(k, "", body, k.zero())
	if err != nil {
		t.Fatalf("a pod of %d variables: %v", maxPatchListItems, err)
	}
	want, _ := json.Marshal(pod)
	var got, exp map[string]any
	_ = json.Unmarshal(j, &got)
	_ = json.Unmarshal(want, &exp)
	delete(got, "kind")
	delete(got, "apiVersion")
	if fmt.Sprint(got) != fmt.Sprint(exp) {
		t.Errorf("decoded:\n%s\nwant:\n%s", j, want)
	}
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{}}
	for i := range 5000 {
		cm.Data[fmt.Sprint("k", i)] = "v"
	}
	if _, err := fromProtobuf(New(Options{}).writeKinds()[1], "", protoBody(t, cm, "ConfigMap"), New(Options{}).writeKinds()[1].zero()); err != nil {
		t.Errorf("a ConfigMap of 5 000 keys: %v", err)
	}
}

// TestProtobufWalkRefusals: one item past the limit in a nested list, too
// many map entries, and a body the walk cannot follow.
func TestProtobufWalkRefusals(t *testing.T) {
	k := New(Options{}).writeKinds()[0]
	_, err := fromProtobuf(k, "rich", protoBody(t, richPod(maxPatchListItems+1), "Pod"), k.zero())
	if code := statusCode(err); code != http.StatusRequestEntityTooLarge || !strings.Contains(err.Error(), "spec.containers[0].env") {
		t.Errorf("%d variables: %d %v", maxPatchListItems+1, code, err)
	}
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{}}
	for i := range maxPatchElements + 1 {
		cm.Data[fmt.Sprint("k", i)] = ""
	}
	_, err = fromProtobuf(New(Options{}).writeKinds()[1], "c", protoBody(t, cm, "ConfigMap"), New(Options{}).writeKinds()[1].zero())
	if code := statusCode(err); code != http.StatusRequestEntityTooLarge || !strings.Contains(err.Error(), fmt.Sprint(maxPatchElements)) {
		t.Errorf("%d keys: %d %v", maxPatchElements+1, code, err)
	}
	// A length running past the end, and a group.
	for _, raw := range [][]byte{{0x12, 0xff, 0x01}, protowire.AppendTag(nil, 3, protowire.StartGroupType)} {
		body := append([]byte("k8s\x00"), protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), raw)...)
		if _, err := fromProtobuf(k, "", body, k.zero()); statusCode(err) != http.StatusBadRequest {
			t.Errorf("raw %x: %v, want 400", raw, err)
		}
	}
	if n := packedCount(protowire.AppendBytes(nil, protowire.AppendVarint(protowire.AppendVarint(nil, 1), 300)), "varint"); n != 2 {
		t.Errorf("packed varints 1, 300: counted %d", n)
	}
}

func statusCode(err error) int {
	if s, ok := err.(interface{ Status() metav1.Status }); ok {
		return int(s.Status().Code)
	}
	return 0
}
