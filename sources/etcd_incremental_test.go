package sources

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/internal/testutil"
)

// podsByName maps the pods of u by name.
func podsByName(u Update) map[string]*v1.Pod {
	m := map[string]*v1.Pod{}
	for _, d := range u.Pods {
		m[d.Pod.Name] = d.Pod
	}
	return m
}

// An unchanged key's pods are sent again as the same objects, so the
// informer's merge sees them unchanged by pointer; a changed key's pods are
// new objects.
func TestEtcdSourceSendsUnchangedPodsAsTheSameObjects(t *testing.T) {
	t.Parallel()
	e := startEtcd(t)
	c := e.Client()
	mustPut(t, c, testPrefix+"default/a", podManifest("a", "busybox:1"))
	mustPut(t, c, testPrefix+"default/b", podManifest("b", "busybox:1"))
	updates := startSource(t, newTestEtcdSource(e.ClientURL))
	first := podsByName(await(t, updates, 10*time.Second, "a, b", exactly("a", "b")))

	mustPut(t, c, testPrefix+"default/c", podManifest("c", "busybox:1"))
	second := podsByName(await(t, updates, 5*time.Second, "c put", exactly("a", "b", "c")))
	for _, n := range []string{"a", "b"} {
		if second[n] != first[n] {
			t.Errorf("pod %s of an unchanged key is a new object after another key's put", n)
		}
	}

	mustPut(t, c, testPrefix+"default/a", podManifest("a", "busybox:2"))
	third := podsByName(await(t, updates, 5*time.Second, "a changed", func(u Update) bool {
		return exactly("a", "b", "c")(u) && podImage(u, "a") == "busybox:2"
	}))
	if third["a"] == second["a"] {
		t.Error("pod a of a changed key is the old object")
	}
	if third["b"] != second["b"] || third["c"] != second["c"] {
		t.Error("pods b and c of unchanged keys are new objects after a's put")
	}
}

// The warning line of an etcd pod is logged once per spec: not again when
// other keys change, again when its own spec changes or after it was gone.
func TestEtcdSourceWarnsOncePerChange(t *testing.T) {
	t.Parallel()
	e := startEtcd(t)
	c := e.Client()
	var buf testutil.SyncBuffer
	s := newTestEtcdSource(e.ClientURL)
	s.opts.Log = slog.New(slog.NewTextHandler(&buf, nil))
	warned := podManifest("w", "busybox") + "  tolerations: [{key: k}]\n"
	count := func() int { return strings.Count(buf.String(), "ignored without a cluster") }
	mustPut(t, c, testPrefix+"default/w", warned)
	updates := startSource(t, s)
	await(t, updates, 10*time.Second, "w", exactly("w"))
	for _, n := range []string{"p", "q"} {
		mustPut(t, c, testPrefix+"default/"+n, podManifest(n, "busybox"))
	}
	await(t, updates, 5*time.Second, "p, q", exactly("w", "p", "q"))
	if n := count(); n != 1 {
		t.Fatalf("%d warning lines after other keys changed, want 1:\n%s", n, buf.String())
	}
	mustPut(t, c, testPrefix+"default/w", warned+"  schedulerName: other\n")
	await(t, updates, 5*time.Second, "w changed", func(u Update) bool {
		return exactly("w", "p", "q")(u) && podsByName(u)["w"].Spec.SchedulerName == "other"
	})
	if n := count(); n != 2 {
		t.Fatalf("%d warning lines after w's spec changed, want 2:\n%s", n, buf.String())
	}
	mustDelete(t, c, testPrefix+"default/w")
	await(t, updates, 5*time.Second, "w gone", exactly("p", "q"))
	mustPut(t, c, testPrefix+"default/w", warned)
	await(t, updates, 5*time.Second, "w back", exactly("w", "p", "q"))
	if n := count(); n != 3 {
		t.Fatalf("%d warning lines after w came back, want 3:\n%s", n, buf.String())
	}
}
