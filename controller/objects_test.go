package controller

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

// keyLog records the keys a store notifies.
type keyLog struct {
	mu   sync.Mutex
	keys []string
}

func (k *keyLog) add(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.keys = append(k.keys, key)
}

func (k *keyLog) take() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := k.keys
	k.keys = nil
	return out
}

// newObjectsHarness is newHarness over a store whose notifications are
// recorded.
func newObjectsHarness(t *testing.T) (*harness, *keyLog) {
	h := newHarness(t)
	log := &keyLog{}
	st, err := store.New(log.add)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.UpsertSource(&model.Source{Name: "file", Synced: true}); err != nil {
		t.Fatal(err)
	}
	h.st = st
	h.ctrl = New(h.ctrl.cfg, st, h.rt, nil)
	t.Cleanup(func() { // unmounts Secret tmpfs before TempDir's removal
		ents, _ := os.ReadDir(filepath.Join(h.ctrl.paths.Dir(), "pods"))
		for _, e := range ents {
			if err := h.ctrl.paths.RemovePod(e.Name()); err != nil {
				t.Error(err)
			}
		}
	})
	return h, log
}

func cmObject(source, name string, data map[string]string) *model.Object {
	key := "default/" + name
	return &model.Object{Kind: model.KindConfigMap, Key: key, Ref: model.ObjectRef(model.KindConfigMap, key), Source: source,
		ConfigMap: &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: data}}
}

func secretObject(source, name string, data map[string]string) *model.Object {
	key := "default/" + name
	s := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: map[string][]byte{}, Type: v1.SecretTypeOpaque}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return &model.Object{Kind: model.KindSecret, Key: key, Ref: model.ObjectRef(model.KindSecret, key), Source: source, Secret: s}
}

// apply writes source's complete state (its pods and objects) as the
// informer does.
func (h *harness) apply(source string, pods []*v1.Pod, objs ...*model.Object) {
	h.t.Helper()
	err := h.st.ApplySource(source, func(v store.View) (store.SourceWrite, error) {
		var w store.SourceWrite
		for _, p := range pods {
			old, _ := h.st.Pod(nil, p.Namespace+"/"+p.Name)
			if old != nil && old.Spec == p {
				w.Pods = append(w.Pods, old)
				continue
			}
			w.Pods = append(w.Pods, &model.Pod{Key: p.Namespace + "/" + p.Name, Source: source, Origin: "f.yaml", Spec: p,
				SeenAt: h.clock.Now(), Refs: manifest.RefKeys(p)})
		}
		w.Objects = objs
		return w, nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
}

func configPod() *v1.Pod {
	c := ctr("app", "app:1")
	c.Env = []v1.EnvVar{
		{Name: "FROM_CM", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Key: "mode"}}},
		{Name: "PASSWORD", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}, Key: "password"}}},
	}
	c.EnvFrom = []v1.EnvFromSource{{Prefix: "CM_", ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}}
	c.VolumeMounts = []v1.VolumeMount{{Name: "conf", MountPath: "/etc/conf"}, {Name: "sec", MountPath: "/etc/sec"}}
	p := testPod("web", c)
	p.Spec.Volumes = []v1.Volume{
		{Name: "conf", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}},
		{Name: "sec", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "creds", DefaultMode: ptr.To(int32(0o400))}}},
	}
	return p
}

// TestMissingObjectWaitsThenStarts: a container using a missing ConfigMap
// waits with CreateContainerConfigError and the kubelet's message; the
// object's arrival notifies the pod, whose next reconcile starts it with
// the values in its env and files.
func TestMissingObjectWaitsThenStarts(t *testing.T) {
	h, log := newObjectsHarness(t)
	pod := configPod()
	h.apply("file", []*v1.Pod{pod}, secretObject("file", "creds", map[string]string{"password": "s3cret"}))
	h.settle("default/web")
	if _, ok := h.running("default/web")["app"]; ok {
		t.Fatal("app started without its ConfigMap")
	}
	st, _ := h.st.Pod(nil, "default/web")
	w := waitingOf(st, "app")
	if w == nil || w.Reason != "CreateContainerConfigError" || !strings.Contains(w.Message, `configmap "cfg" not found`) {
		t.Fatalf("app waits with %+v", w)
	}
	log.take()
	h.apply("file", []*v1.Pod{pod}, secretObject("file", "creds", map[string]string{"password": "s3cret"}),
		cmObject("file", "cfg", map[string]string{"mode": "fast", "level": "3"}))
	if keys := log.take(); !slices.Contains(keys, "default/web") {
		t.Fatalf("the ConfigMap's arrival notified %v, not the pod", keys)
	}
	h.settle("default/web")
	app := h.running("default/web")["app"]
	if app == nil {
		t.Fatal("app not started once its ConfigMap arrived")
	}
	cfg, _ := h.rt.Config(app.ID)
	for _, want := range []string{"FROM_CM=fast", "PASSWORD=s3cret", "CM_mode=fast", "CM_level=3"} {
		if !slices.Contains(cfg.Env, want) {
			t.Errorf("env %v lacks %s", cfg.Env, want)
		}
	}
	var confDir, secDir string
	for _, m := range cfg.Mounts {
		switch m.Target {
		case "/etc/conf":
			confDir = m.Source
		case "/etc/sec":
			secDir = m.Source
		}
		if (m.Target == "/etc/conf" || m.Target == "/etc/sec") && !m.ReadOnly {
			t.Errorf("projected mount %s is writable", m.Target)
		}
	}
	if b, err := os.ReadFile(filepath.Join(confDir, "mode")); err != nil || string(b) != "fast" {
		t.Fatalf("conf/mode: %q %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(secDir, "password")); err != nil || fi.Mode().Perm() != 0o400 {
		t.Fatalf("sec/password: %v %v", fi, err)
	}

	// An update changes the files in place, without restarting anything.
	creates := h.rt.CallCount("CreateContainer")
	h.apply("file", []*v1.Pod{pod}, secretObject("file", "creds", map[string]string{"password": "s3cret"}),
		cmObject("file", "cfg", map[string]string{"mode": "slow"}))
	h.settle("default/web")
	if b, err := os.ReadFile(filepath.Join(confDir, "mode")); err != nil || string(b) != "slow" {
		t.Fatalf("conf/mode after the update: %q %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(confDir, "level")); !os.IsNotExist(err) {
		t.Fatalf("a removed key's file stayed: %v", err)
	}
	if n := h.rt.CallCount("CreateContainer"); n != creates {
		t.Fatalf("an object update created %d containers", n-creates)
	}
}

// TestObjectOfAnotherSourceIsMissing: a pod never reads another source's
// object, even of its key; the wait says whose it is.
func TestObjectOfAnotherSourceIsMissing(t *testing.T) {
	h, _ := newObjectsHarness(t)
	if err := h.st.UpsertSource(&model.Source{Name: "http", Synced: true}); err != nil {
		t.Fatal(err)
	}
	c := ctr("app", "app:1")
	c.EnvFrom = []v1.EnvFromSource{{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}}}}
	pod := testPod("web", c)
	h.apply("http", nil, secretObject("http", "creds", map[string]string{"password": "theirs"}))
	h.apply("file", []*v1.Pod{pod})
	h.settle("default/web")
	if h.running("default/web")["app"] != nil {
		t.Fatal("app started with another source's Secret")
	}
	st, _ := h.st.Pod(nil, "default/web")
	w := waitingOf(st, "app")
	if w == nil || !strings.Contains(w.Message, `secret "creds" not found (source "http" declares it`) {
		t.Fatalf("app waits with %+v", w)
	}
	if strings.Contains(w.Message, "theirs") {
		t.Fatal("the wait shows the Secret's value")
	}
}

// TestProjectionsGoWithAPodThatNeverRan: a pod deleted before any of its
// containers existed leaves no Secret files behind.
func TestProjectionsGoWithAPodThatNeverRan(t *testing.T) {
	h, _ := newObjectsHarness(t)
	pod := configPod() // its ConfigMap is missing: nothing starts but the sandbox
	pod.Spec.Containers[0].Image = "absent:1"
	pod.Spec.Containers[0].ImagePullPolicy = v1.PullNever
	h.apply("file", []*v1.Pod{pod}, secretObject("file", "creds", map[string]string{"password": "s3cret"}))
	h.settle("default/web")
	dir, _ := h.ctrl.paths.ProjectedDir(string(pod.UID), "sec")
	if _, err := os.Stat(filepath.Join(dir, "password")); err != nil {
		t.Fatalf("secret not projected: %v", err)
	}
	for _, ct := range h.running("default/web") {
		h.rt.Remove(ct.ID)
		_ = h.st.DeleteContainer(ct.ID, h.st.Seq())
	}
	h.apply("file", nil)
	h.settle("default/web")
	pd, _ := h.ctrl.paths.PodDir(string(pod.UID))
	if _, err := os.Stat(pd); !os.IsNotExist(err) {
		t.Fatalf("pod directory with its Secret left behind: %v", err)
	}
}

func waitingOf(p *model.Pod, name string) *v1.ContainerStateWaiting {
	if p == nil {
		return nil
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == name {
			return cs.State.Waiting
		}
	}
	return nil
}

// TestRenamedPodKeepsItsProjections: a pod renamed with its metadata.uid
// keeps its directory; the old key's reconcile leaves it alone.
func TestRenamedPodKeepsItsProjections(t *testing.T) {
	h, _ := newObjectsHarness(t)
	secret := secretObject("file", "creds", map[string]string{"password": "s3cret"})
	cm := cmObject("file", "cfg", map[string]string{"mode": "fast"})
	pod := configPod()
	h.apply("file", []*v1.Pod{pod}, secret, cm)
	h.settle("default/web")
	renamed := pod.DeepCopy()
	renamed.Name = "web2"
	h.apply("file", []*v1.Pod{renamed}, secret, cm)
	h.settle("default/web")
	dir, _ := h.ctrl.paths.ProjectedDir(string(pod.UID), "sec")
	if _, err := os.Stat(filepath.Join(dir, "password")); err != nil {
		t.Fatalf("the renamed pod's Secret went with its old name: %v", err)
	}
}
