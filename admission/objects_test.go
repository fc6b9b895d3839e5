package admission

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
)

func configMap(name, value string, immutable bool) manifest.Object {
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: map[string]string{"k": value}}
	if immutable {
		cm.Immutable = ptr.To(true)
	}
	return manifest.Object{Kind: model.KindConfigMap, ConfigMap: cm, Origin: name + ".yaml"}
}

func stored(source string, o manifest.Object) *model.Object {
	return &model.Object{Kind: o.Kind, Key: o.Key(), Ref: model.ObjectRef(o.Kind, o.Key()), Source: source, Origin: o.Origin, ConfigMap: o.ConfigMap, Secret: o.Secret}
}

// TestObjectOwnership: the first source keeps an object's key; another
// source's object of that key is refused with the owner named.
func TestObjectOwnership(t *testing.T) {
	v := view{objects: []*model.Object{stored("http", configMap("cfg", "a", false))}}
	d, err := Admit(v, Update{Source: "file", Objects: []manifest.Object{configMap("cfg", "b", false), configMap("mine", "c", false)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Objects) != 1 || d.Objects[0].Key != "default/mine" {
		t.Fatalf("objects %v, want only default/mine", d.Objects)
	}
	if len(d.Errors) != 1 || !strings.Contains(d.Errors[0], `configmap default/cfg: configmap already provided by source "http"`) {
		t.Fatalf("errors %q", d.Errors)
	}
}

// TestImmutableObjectKept: a changed immutable ConfigMap keeps its stored
// version with the refusal; unchanged, it keeps its pointer.
func TestImmutableObjectKept(t *testing.T) {
	old := stored("file", configMap("cfg", "a", true))
	v := view{objects: []*model.Object{old}}
	d, err := Admit(v, Update{Source: "file", Objects: []manifest.Object{configMap("cfg", "b", true)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Objects) != 1 || d.Objects[0].ConfigMap.Data["k"] != "a" || !strings.Contains(d.Objects[0].Error, "immutable") {
		t.Fatalf("objects %+v: want the old data with an immutable error", d.Objects)
	}
	d, err = Admit(v, Update{Source: "file", Objects: []manifest.Object{configMap("cfg", "a", true)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Objects) != 1 || d.Objects[0] != old {
		t.Fatalf("an unchanged object was rewritten: %+v", d.Objects)
	}
	// Gone from its source, it goes.
	if d, _ = Admit(v, Update{Source: "file"}); len(d.Objects) != 0 {
		t.Fatalf("a removed immutable object stayed: %+v", d.Objects)
	}
}

// TestInvalidObjectUpdateKeepsLastGood: an object whose update failed to
// validate keeps its last good version, with the error.
func TestInvalidObjectUpdateKeepsLastGood(t *testing.T) {
	old := stored("file", configMap("cfg", "a", false))
	v := view{objects: []*model.Object{old}}
	bad := manifest.ManifestError{Origin: "cfg.yaml", Kind: model.KindConfigMap, PodKey: "default/cfg", Field: "data[a/b]", Err: "Invalid value"}
	d, err := Admit(v, Update{Source: "file", Errors: []manifest.ManifestError{bad}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Objects) != 1 || d.Objects[0].ConfigMap != old.ConfigMap || d.Objects[0].Error == "" {
		t.Fatalf("objects %+v: want the last good one with its error", d.Objects)
	}
}

// TestPodUsingAnotherSourcesObjectRefused: a pod needing a ConfigMap that
// another source declares is refused, saying so; an optional use is not.
func TestPodUsingAnotherSourcesObjectRefused(t *testing.T) {
	v := view{objects: []*model.Object{stored("http", configMap("cfg", "a", false))}}
	pod := func(name string, optional bool) manifest.Desired {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid")}}
		p.Spec.Containers = []v1.Container{{Name: "c", Image: "i", EnvFrom: []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{
			LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Optional: ptr.To(optional)}}}}}
		return manifest.Desired{Pod: p, Origin: name + ".yaml"}
	}
	d, err := Admit(v, Update{Source: "file", Pods: []manifest.Desired{pod("needs", false), pod("may", true)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Pods) != 1 || d.Pods[0].Key != "default/may" {
		t.Fatalf("admitted %v, want only default/may", d.Pods)
	}
	if len(d.Errors) != 1 || !strings.Contains(d.Errors[0], `configmap "cfg" is declared by source "http"; a pod may use only ConfigMaps and Secrets of its own source ("file")`) {
		t.Fatalf("errors %q", d.Errors)
	}
}

// TestReadWriteOncePodClaim: a ReadWriteOncePod claim admits one pod; a
// ReadWriteOnce claim is shared by the node's pods.
func TestReadWriteOncePodClaim(t *testing.T) {
	claim := func(name string, mode v1.PersistentVolumeAccessMode) manifest.Object {
		c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
		c.Spec.AccessModes = []v1.PersistentVolumeAccessMode{mode}
		return manifest.Object{Kind: model.KindPVC, PVC: c, Origin: "c.yaml"}
	}
	pod := func(name, claim string) manifest.Desired {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid")}}
		p.Spec.Containers = []v1.Container{{Name: "c", Image: "i"}}
		p.Spec.Volumes = []v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
		return manifest.Desired{Pod: p, Origin: name + ".yaml"}
	}
	d, err := Admit(view{}, Update{Source: "file", Objects: []manifest.Object{claim("once", v1.ReadWriteOncePod), claim("shared", v1.ReadWriteOnce)},
		Pods: []manifest.Desired{pod("a", "once"), pod("b", "once"), pod("c", "shared"), pod("d", "shared")}})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, p := range d.Pods {
		keys = append(keys, p.Key)
	}
	if strings.Join(keys, ",") != "default/a,default/c,default/d" {
		t.Fatalf("admitted %v", keys)
	}
	if len(d.Errors) != 1 || !strings.Contains(d.Errors[0], `persistentvolumeclaim "once" is ReadWriteOncePod and already used by pod default/a`) {
		t.Fatalf("errors %q", d.Errors)
	}
}
