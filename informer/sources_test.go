package informer

import (
	"errors"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/sources"
	"github.com/berth-dev/berth/store"
)

type countMetrics struct {
	noMetrics
	manifestErrs map[string]int
	updates      map[string]int
}

func (m *countMetrics) ManifestErrors(s string, n int) { m.manifestErrs[s] += n }

func newInformer(t *testing.T) (*SourceInformer, *store.Store, *countMetrics, *[]string) {
	t.Helper()
	var notified []string
	st, err := store.New(func(k string) { notified = append(notified, k) })
	if err != nil {
		t.Fatal(err)
	}
	m := &countMetrics{manifestErrs: map[string]int{}, updates: map[string]int{}}
	return NewSourceInformer(st, nil, m, nil), st, m, &notified
}

func pod(name, image string, hostPort int32) manifest.Desired {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: image}}}}
	if hostPort != 0 {
		p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: hostPort, Protocol: v1.ProtocolTCP}}
	}
	return manifest.Desired{Pod: p, Origin: name + ".yaml"}
}

func mustApply(t *testing.T, i *SourceInformer, u sources.Update) {
	t.Helper()
	if err := i.Apply(u); err != nil {
		t.Fatal(err)
	}
}

func TestApplyAddUpdateDelete(t *testing.T) {
	inf, st, _, notified := newInformer(t)
	if err := inf.Register("file"); err != nil {
		t.Fatal(err)
	}
	src, _ := st.Source(nil, "file")
	if src.Synced {
		t.Fatal("source synced before its first update")
	}
	mustApply(t, inf, sources.Update{Source: "file", Pods: []manifest.Desired{pod("a", "img:1", 0), pod("b", "img:1", 0)}})
	if src, _ = st.Source(nil, "file"); !src.Synced {
		t.Fatal("source not synced after an update")
	}
	pods, _ := st.Pods(nil)
	if len(pods) != 2 {
		t.Fatalf("%d pods", len(pods))
	}
	a1, _ := st.Pod(nil, "default/a")

	*notified = nil
	mustApply(t, inf, sources.Update{Source: "file", Pods: []manifest.Desired{pod("a", "img:1", 0), pod("b", "img:2", 0)}})
	if a2, _ := st.Pod(nil, "default/a"); a2 != a1 {
		t.Error("unchanged pod rewritten")
	}
	if strings.Join(*notified, ",") != "default/b" {
		t.Errorf("notified %v, want only default/b", *notified)
	}
	mustApply(t, inf, sources.Update{Source: "file", Pods: []manifest.Desired{pod("b", "img:2", 0)}})
	if a, _ := st.Pod(nil, "default/a"); a != nil {
		t.Error("pod a not deleted")
	}
}

func TestInvalidEditKeepsLastGoodSpec(t *testing.T) {
	inf, st, m, _ := newInformer(t)
	mustApply(t, inf, sources.Update{Source: "file", Pods: []manifest.Desired{pod("a", "img:1", 0), pod("b", "img:1", 0)}})

	// a's file no longer decodes at all; b's pod is invalid.
	mustApply(t, inf, sources.Update{Source: "file", Errors: []manifest.ManifestError{
		{Origin: "a.yaml", Err: "yaml: line 3: did not find expected key"},
		{Origin: "b.yaml", PodKey: "default/b", Field: "spec.containers[0].image", Err: "Required value"},
	}})
	a, _ := st.Pod(nil, "default/a")
	b, _ := st.Pod(nil, "default/b")
	if a == nil || b == nil {
		t.Fatal("last good spec dropped")
	}
	if b.Spec.Spec.Containers[0].Image != "img:1" || !strings.Contains(b.Error, "spec.containers[0].image") {
		t.Errorf("b = %q error %q", b.Spec.Spec.Containers[0].Image, b.Error)
	}
	src, _ := st.Source(nil, "file")
	if len(src.Errors) != 2 || m.manifestErrs["file"] != 2 {
		t.Errorf("source errors %v, counted %d", src.Errors, m.manifestErrs["file"])
	}
	// The same errors again are not counted again; a fix clears them.
	mustApply(t, inf, sources.Update{Source: "file", Errors: []manifest.ManifestError{
		{Origin: "a.yaml", Err: "yaml: line 3: did not find expected key"},
		{Origin: "b.yaml", PodKey: "default/b", Field: "spec.containers[0].image", Err: "Required value"},
	}})
	if m.manifestErrs["file"] != 2 {
		t.Errorf("repeated errors counted again: %d", m.manifestErrs["file"])
	}
	mustApply(t, inf, sources.Update{Source: "file", Pods: []manifest.Desired{pod("a", "img:1", 0), pod("b", "img:3", 0)}})
	b, _ = st.Pod(nil, "default/b")
	if b.Error != "" || b.Spec.Spec.Containers[0].Image != "img:3" {
		t.Errorf("fix not applied: %q %q", b.Error, b.Spec.Spec.Containers[0].Image)
	}
	// An invalid new pod is simply not created.
	mustApply(t, inf, sources.Update{Source: "file", Pods: []manifest.Desired{pod("a", "img:1", 0), pod("b", "img:3", 0)},
		Errors: []manifest.ManifestError{{Origin: "c.yaml", PodKey: "default/c", Field: "metadata.name", Err: "bad"}}})
	if c, _ := st.Pod(nil, "default/c"); c != nil {
		t.Error("invalid new pod created")
	}
}

func TestConflictsBetweenSources(t *testing.T) {
	inf, st, _, _ := newInformer(t)
	mustApply(t, inf, sources.Update{Source: "file", Pods: []manifest.Desired{pod("a", "img:1", 8080)}})
	mustApply(t, inf, sources.Update{Source: "http", Pods: []manifest.Desired{pod("a", "img:2", 0), pod("b", "img:1", 8080), pod("c", "img:1", 9090)}})
	a, _ := st.Pod(nil, "default/a")
	if a.Source != "file" || a.Spec.Spec.Containers[0].Image != "img:1" {
		t.Error("first source lost its pod to the second")
	}
	if b, _ := st.Pod(nil, "default/b"); b != nil {
		t.Error("hostPort conflict accepted")
	}
	if c, _ := st.Pod(nil, "default/c"); c == nil {
		t.Error("unrelated pod rejected")
	}
	src, _ := st.Source(nil, "http")
	joined := strings.Join(src.Errors, "\n")
	if !strings.Contains(joined, `already provided by source "file"`) || !strings.Contains(joined, "hostPort 8080/TCP") {
		t.Errorf("errors %q", joined)
	}
	// Within one source, an accepted pod keeps its port against a newcomer.
	mustApply(t, inf, sources.Update{Source: "http", Pods: []manifest.Desired{pod("d", "img:1", 9090), pod("c", "img:1", 9090)}})
	if c, _ := st.Pod(nil, "default/c"); c == nil {
		t.Error("accepted pod lost its port")
	}
	if d, _ := st.Pod(nil, "default/d"); d != nil {
		t.Error("newcomer took an accepted pod's port")
	}
}

func TestReadFailureKeepsPodsAndDoesNotSync(t *testing.T) {
	inf, st, _, _ := newInformer(t)
	_ = inf.Register("http")
	mustApply(t, inf, sources.Update{Source: "http", Err: errors.New("500 Internal Server Error")})
	src, _ := st.Source(nil, "http")
	if src.Synced || src.LastError == "" {
		t.Fatalf("after a failed first read: synced=%v lastError=%q", src.Synced, src.LastError)
	}
	mustApply(t, inf, sources.Update{Source: "http", Pods: []manifest.Desired{pod("a", "img:1", 0)}})
	mustApply(t, inf, sources.Update{Source: "http", Err: errors.New("timeout")})
	if a, _ := st.Pod(nil, "default/a"); a == nil {
		t.Fatal("read failure dropped pods")
	}
	src, _ = st.Source(nil, "http")
	if !src.Synced || src.LastError != "timeout" {
		t.Fatalf("synced=%v lastError=%q", src.Synced, src.LastError)
	}
}

func TestKeptPodKeepsItsPorts(t *testing.T) {
	inf, st, _, _ := newInformer(t)
	mustApply(t, inf, sources.Update{Source: "file", Pods: []manifest.Desired{pod("a", "img:1", 8080)}})
	// a.yaml is mid-edit and unparsable while b.yaml claims the same port.
	mustApply(t, inf, sources.Update{Source: "file", Pods: []manifest.Desired{pod("b", "img:1", 8080)},
		Errors: []manifest.ManifestError{{Origin: "a.yaml", Err: "yaml: truncated"}}})
	if a, _ := st.Pod(nil, "default/a"); a == nil {
		t.Fatal("kept pod dropped")
	}
	if b, _ := st.Pod(nil, "default/b"); b != nil {
		t.Fatal("a newcomer took the port of a pod kept on its last good spec")
	}
}

func TestStatusWrittenMeanwhileIsNotRolledBack(t *testing.T) {
	inf, st, _, _ := newInformer(t)
	mustApply(t, inf, sources.Update{Source: "file", Pods: []manifest.Desired{pod("a", "img:1", 0)}})
	old, _ := st.Pod(nil, "default/a")
	// The controller records status; then the source re-sends the same
	// desired pod, as the stale object it read before.
	_, _ = st.UpdatePod("default/a", func(p *model.Pod) bool { p.Status.Phase = v1.PodRunning; return true })
	if err := st.ReplaceSourcePods("file", []*model.Pod{old}); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Pod(nil, "default/a"); got.Status.Phase != v1.PodRunning {
		t.Fatal("status rolled back by an unchanged source update")
	}
	// A changed spec keeps the latest status too.
	edited := *old
	edited.Spec = old.Spec.DeepCopy()
	edited.Spec.Spec.Containers[0].Image = "img:2"
	_ = st.ReplaceSourcePods("file", []*model.Pod{&edited})
	if got, _ := st.Pod(nil, "default/a"); got.Status.Phase != v1.PodRunning || got.Spec.Spec.Containers[0].Image != "img:2" {
		t.Fatalf("after an edit: phase %s image %s", got.Status.Phase, got.Spec.Spec.Containers[0].Image)
	}
}

func TestEditKeepsTerminalStateAndMessages(t *testing.T) {
	inf, st, _, _ := newInformer(t)
	mustApply(t, inf, sources.Update{Source: "file", Pods: []manifest.Desired{pod("a", "img:1", 0)}})
	msgs := map[string]string{"c1": "bye"}
	_, _ = st.UpdatePod("default/a", func(p *model.Pod) bool {
		p.Terminal, p.TerminalSpec, p.TerminationMessages = v1.PodFailed, "h1", msgs
		return true
	})
	check := func(how string) {
		t.Helper()
		got, _ := st.Pod(nil, "default/a")
		if got.Terminal != v1.PodFailed || got.TerminalSpec != "h1" || got.TerminationMessages["c1"] != "bye" {
			t.Errorf("%s: terminal %q spec %q messages %v, want them kept", how, got.Terminal, got.TerminalSpec, got.TerminationMessages)
		}
	}
	// Through the informer's merge.
	mustApply(t, inf, sources.Update{Source: "file", Pods: []manifest.Desired{pod("a", "img:2", 0)}})
	check("edit through the informer")
	// Through the store's replace.
	cur, _ := st.Pod(nil, "default/a")
	edited := *cur
	edited.Terminal, edited.TerminalSpec, edited.TerminationMessages = "", "", nil
	edited.Spec = cur.Spec.DeepCopy()
	edited.Spec.Spec.Containers[0].Image = "img:3"
	if err := st.ReplaceSourcePods("file", []*model.Pod{&edited}); err != nil {
		t.Fatal(err)
	}
	check("ReplaceSourcePods of an edit")
}

func TestRunningPodOfUnsyncedSourceKeepsItsClaim(t *testing.T) {
	inf, st, _, _ := newInformer(t)
	_ = inf.Register("file")
	_ = inf.Register("http")
	// After a restart: http ran default/web, file answers first.
	_, _ = st.UpsertContainer(&model.Container{ID: "1", PodKey: "default/web", Source: "http", State: model.StateRunning})
	mustApply(t, inf, sources.Update{Source: "file", Pods: []manifest.Desired{pod("web", "img:1", 0)}})
	if p, _ := st.Pod(nil, "default/web"); p != nil {
		t.Fatal("the first source to answer took a pod another source runs")
	}
	mustApply(t, inf, sources.Update{Source: "http", Pods: []manifest.Desired{pod("web", "img:1", 0)}})
	if p, _ := st.Pod(nil, "default/web"); p == nil || p.Source != "http" {
		t.Fatal("the running source did not keep its pod")
	}
}

// A pod UID names the pod's directories on the host, so two pods never share
// one: the second claimant is rejected, within a source and across sources,
// and a renamed pod keeping its UID is no clash with itself.
func TestUIDClaimedOnce(t *testing.T) {
	inf, st, _, _ := newInformer(t)
	twin := func(name, uid string) manifest.Desired {
		d := pod(name, "img:1", 0)
		d.Pod.UID = types.UID(uid)
		return d
	}
	mustApply(t, inf, sources.Update{Source: "file", Pods: []manifest.Desired{twin("a", "shared"), twin("b", "shared")}})
	if a, _ := st.Pod(nil, "default/a"); a == nil {
		t.Fatal("first claimant rejected")
	}
	if b, _ := st.Pod(nil, "default/b"); b != nil {
		t.Error("second pod with the same uid accepted")
	}
	mustApply(t, inf, sources.Update{Source: "http", Pods: []manifest.Desired{twin("c", "shared")}})
	if c, _ := st.Pod(nil, "default/c"); c != nil {
		t.Error("another source's pod took the uid")
	}
	src, _ := st.Source(nil, "http")
	if joined := strings.Join(src.Errors, "\n"); !strings.Contains(joined, `metadata.uid: shared is already the uid of a pod of source "file"`) || strings.Contains(joined, "default/a") {
		t.Errorf("errors %q", joined)
	}
	// a renamed to a2, same uid, in one update: accepted.
	mustApply(t, inf, sources.Update{Source: "file", Pods: []manifest.Desired{twin("a2", "shared")}})
	if a2, _ := st.Pod(nil, "default/a2"); a2 == nil {
		t.Error("a renamed pod lost its own uid")
	}
}

// Admission's checks and its write are one store transaction. While they
// were separate reads and a later write, two sources offering the same host
// port (or the same pod key) at once could both pass the checks, and both
// pods were stored: two pods bound to one port, or one pod of two sources.
func TestConcurrentSourcesAdmitOnePod(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b manifest.Desired
	}{
		{"same host port", pod("a", "img", 8080), pod("b", "img", 8080)},
		{"same pod key", pod("web", "img:1", 0), pod("web", "img:2", 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for round := range 300 {
				inf, st, _, _ := newInformer(t)
				for _, s := range []string{"file", "http"} {
					if err := st.UpsertSource(&model.Source{Name: s, Synced: true}); err != nil {
						t.Fatal(err)
					}
				}
				b := tc.b
				b.Pod = b.Pod.DeepCopy()
				b.Pod.UID = "uid-other" // the UID check is not what refuses it
				start := make(chan struct{})
				var wg sync.WaitGroup
				for _, u := range []sources.Update{
					{Source: "file", Pods: []manifest.Desired{tc.a}},
					{Source: "http", Pods: []manifest.Desired{b}},
				} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						if err := inf.Apply(u); err != nil {
							t.Error(err)
						}
					}()
				}
				close(start)
				wg.Wait()
				pods, _ := st.Pods(nil)
				if len(pods) != 1 {
					var got []string
					for _, p := range pods {
						got = append(got, p.Source+":"+p.Key)
					}
					t.Fatalf("round %d: %d pods admitted (%v), want exactly one", round, len(pods), got)
				}
			}
		})
	}
}

// TestSourceWarningsAreNotManifestErrors: a source's own warnings (a
// skipped file, a Secret others may read) show in its status but are not
// counted as rejected manifests; a refused pod is.
func TestSourceWarningsAreNotManifestErrors(t *testing.T) {
	i, st, m, _ := newInformer(t)
	warn := "pods/creds.yaml: holds secret default/creds and group or others may read it (mode 0644); chmod go-rwx it"
	mustApply(t, i, sources.Update{Source: "file", Pods: []manifest.Desired{pod("a", "img", 0)}, Warnings: []string{warn}})
	if n := m.manifestErrs["file"]; n != 0 {
		t.Fatalf("a source warning counted as %d manifest error(s)", n)
	}
	if src, _ := st.Source(nil, "file"); src == nil || len(src.Errors) != 1 || src.Errors[0] != warn {
		t.Fatalf("source status %+v lacks the warning", src)
	}
	bad := manifest.ManifestError{Origin: "b.yaml", PodKey: "default/b", Err: "spec.containers[0].image: Required value"}
	mustApply(t, i, sources.Update{Source: "file", Pods: []manifest.Desired{pod("a", "img", 0)}, Errors: []manifest.ManifestError{bad}, Warnings: []string{warn}})
	if n := m.manifestErrs["file"]; n != 1 {
		t.Fatalf("manifest errors %d, want 1", n)
	}
}
