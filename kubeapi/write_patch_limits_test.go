package kubeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testclock "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/validation"
)

const podPath = "/api/v1/namespaces/default/pods/web"

// copyDoubling is the patch that doubles a document n times: a 1 KiB list,
// then n copies of it into itself.
func copyDoubling(n int) string {
	ops := []string{`{"op":"add","path":"/x","value":["` + strings.Repeat("A", 1024) + `"]}`}
	for range n {
		ops = append(ops, `{"op":"copy","from":"/x","path":"/x/-"}`)
	}
	return "[" + strings.Join(ops, ",") + "]"
}

// TestJSONPatchCopyDoublingRefused: copies that double the document are
// refused once they add more than the copy limit, naming it, before the
// document grows past it; the pod is unchanged.
func TestJSONPatchCopyDoublingRefused(t *testing.T) {
	f := newWriteFixture(t)
	if _, err := f.cs.CoreV1().Pods("default").Create(bg, testPod("web", "img:1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// 14 doublings of 1 KiB is 16 MiB: beyond every limit, small enough
	// for the test machine without the limit.
	code, _, body := f.do(t, "PATCH", podPath, patchJSON, copyDoubling(14), "Authorization", "Bearer push")
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, fmt.Sprint(maxPatchCopyBytes)) {
		t.Fatalf("copy doubling: %d %.300s", code, body)
	}
	// Below the limit the same patch applies (x, an unknown field, is
	// dropped with a warning).
	code, _, body = f.do(t, "PATCH", podPath, patchJSON, copyDoubling(3), "Authorization", "Bearer push")
	if code != http.StatusOK {
		t.Fatalf("three copies: %d %.300s", code, body)
	}
}

// TestJSONPatchResultBounded: a patch whose document ends larger than
// maxPatchedBytes (copies within their limit, adds within the body) is a
// 413 naming the limit.
func TestJSONPatchResultBounded(t *testing.T) {
	f := newWriteFixture(t)
	if _, err := f.cs.CoreV1().Pods("default").Create(bg, testPod("web", "img:1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("B", 1200<<10)
	patch := `[{"op":"add","path":"/metadata/annotations","value":{"a":"` + big + `"}},` +
		`{"op":"copy","from":"/metadata/annotations/a","path":"/metadata/annotations/b"}]`
	code, _, body := f.do(t, "PATCH", podPath, patchJSON, patch)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, fmt.Sprint(maxPatchedBytes)) {
		t.Fatalf("2.4 MB result: %d %.300s", code, body)
	}
}

// steppingClock is a fake clock that moves on by step at every Now, as if
// each reading came after that much work.
type steppingClock struct {
	*testclock.FakeClock
	mu   sync.Mutex
	step time.Duration
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.FakeClock.Step(c.step)
	return c.FakeClock.Now()
}

// TestJSONPatchDeadline: a JSON patch still applying after patchTimeout on
// the API's clock is abandoned between operations and answered 413 naming
// the limit; the same patch applies when time does not run out.
func TestJSONPatchDeadline(t *testing.T) {
	ops := make([]string, 0, 2000)
	for i := range 2000 {
		ops = append(ops, fmt.Sprintf(`{"op":"add","path":"/metadata/labels/l%d","value":"v"}`, i))
	}
	patch := "[" + strings.Join(ops, ",") + "]"

	clk := &steppingClock{FakeClock: testclock.NewFakeClock(time.Unix(1e9, 0))}
	f := newWriteFixtureWith(t, manifest.Options{}, func(o *Options) { o.Clock = clk })
	if _, err := f.cs.CoreV1().Pods("default").Create(bg, testPod("web", "img:1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	clk.mu.Lock()
	clk.step = time.Second
	clk.mu.Unlock()
	code, _, body := f.do(t, "PATCH", podPath, patchJSON, patch)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, patchTimeout.String()) {
		t.Fatalf("slow patch: %d %.300s", code, body)
	}

	g := newWriteFixture(t)
	if _, err := g.cs.CoreV1().Pods("default").Create(bg, testPod("web", "img:1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if code, _, body := g.do(t, "PATCH", podPath, patchJSON, patch); code != http.StatusOK {
		t.Fatalf("the same patch in time: %d %.300s", code, body)
	}
	if p, _ := g.st.Pod(nil, "default/web"); p == nil || p.Spec.Labels["l1999"] != "v" {
		t.Fatal("the 2000 operations did not all apply")
	}
}

// containers is a list of n containers named c0... for a patch.
func containers(n int, env int) []any {
	out := make([]any, n)
	for i := range out {
		c := map[string]any{"name": fmt.Sprintf("c%d", i), "image": "img:1"}
		if env > 0 {
			c["env"] = envList(env, "v")
		}
		out[i] = c
	}
	return out
}

func envList(n int, value string) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"name": fmt.Sprintf("E%d", i), "value": value}
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMergePatchesBoundedBeforeMerging: strategic merge and merge patches
// with a list longer than maxPatchListItems, more than maxPatchElements
// values, or (strategic) list merges beyond maxMergeWork are refused with
// a 413 naming the limit, before the merge (whose cost grows with the
// square of a list); the largest ordinary patches still apply.
func TestMergePatchesBoundedBeforeMerging(t *testing.T) {
	f := newWriteFixture(t)
	if _, err := f.cs.CoreV1().Pods("default").Create(bg, testPod("web", "img:1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	long := mustJSON(t, map[string]any{"spec": map[string]any{"containers": containers(5000, 0)}})
	for _, typ := range []string{patchStrategic, patchMerge} {
		code, _, body := f.do(t, "PATCH", podPath, typ, long, "Authorization", "Bearer push")
		if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "spec.containers") ||
			!strings.Contains(body, fmt.Sprint(maxPatchListItems)) {
			t.Errorf("%s with 5000 containers: %d %.300s", typ, code, body)
		}
	}
	labels := map[string]any{}
	for i := range maxPatchElements + 1 {
		labels[fmt.Sprintf("l%d", i)] = ""
	}
	many := mustJSON(t, map[string]any{"metadata": map[string]any{"labels": labels}})
	code, _, body := f.do(t, "PATCH", podPath, patchMerge, many)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, fmt.Sprint(maxPatchElements)) {
		t.Errorf("merge patch of %d values: %d %.300s", maxPatchElements+1, code, body)
	}

	// Ten containers of 900 variables each, all merged again: every list
	// is within its limit, the merges together are not.
	g := newWriteFixture(t)
	p := mustJSON(t, map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"containers": containers(10, 900)}})
	if code, _, body := g.do(t, "POST", "/api/v1/namespaces/default/pods", "application/json", p); code != http.StatusCreated {
		t.Fatalf("create: %d %.300s", code, body)
	}
	renamed := containers(10, 0)
	for _, c := range renamed {
		env := make([]any, 900)
		for i := range env {
			env[i] = map[string]any{"name": fmt.Sprintf("N%d", i), "value": "w"}
		}
		c.(map[string]any)["env"] = env
	}
	code, _, body = g.do(t, "PATCH", podPath, patchStrategic, mustJSON(t, map[string]any{"spec": map[string]any{"containers": renamed}}))
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, fmt.Sprint(maxMergeWork)) {
		t.Errorf("merges beyond the work limit: %d %.300s", code, body)
	}
}

// TestLargestOrdinaryPatchesApply: what kubectl apply sends for a pod at
// the container limit with 30 variables each (every list in
// $setElementOrder), and a merge patch of a ConfigMap with 20 000 keys,
// are within every limit.
func TestLargestOrdinaryPatchesApply(t *testing.T) {
	f := newWriteFixture(t)
	n := validation.DefaultMaxContainers
	p := mustJSON(t, map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"containers": containers(n, 30)}})
	if code, _, body := f.do(t, "POST", "/api/v1/namespaces/default/pods", "application/json", p); code != http.StatusCreated {
		t.Fatalf("create: %d %.300s", code, body)
	}
	order := make([]any, n)
	changed := make([]any, n)
	for i := range order {
		name := fmt.Sprintf("c%d", i)
		order[i] = map[string]any{"name": name}
		envOrder := make([]any, 30)
		for j := range envOrder {
			envOrder[j] = map[string]any{"name": fmt.Sprintf("E%d", j)}
		}
		changed[i] = map[string]any{"name": name, "$setElementOrder/env": envOrder, "env": envList(30, "changed")}
	}
	smp := mustJSON(t, map[string]any{"spec": map[string]any{"$setElementOrder/containers": order, "containers": changed}})
	if code, _, body := f.do(t, "PATCH", podPath, patchStrategic, smp); code != http.StatusOK {
		t.Fatalf("apply-style patch of %d containers: %d %.300s", n, code, body)
	}
	if sp, _ := f.st.Pod(nil, "default/web"); sp == nil || sp.Spec.Spec.Containers[n-1].Env[29].Value != "changed" {
		t.Fatal("the apply-style patch did not apply")
	}

	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "conf"}, Data: map[string]string{"a": "1"}}
	if _, err := f.cs.CoreV1().ConfigMaps("default").Create(bg, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	data := map[string]any{}
	for i := range 20000 {
		data[fmt.Sprintf("key-%d", i)] = "v"
	}
	code, _, body := f.do(t, "PATCH", "/api/v1/namespaces/default/configmaps/conf", patchMerge, mustJSON(t, map[string]any{"data": data}))
	if code != http.StatusOK {
		t.Fatalf("merge patch of 20000 keys: %d %.300s", code, body)
	}
}
