package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// watchLines opens the watch at path (a query string included) with token
// and accept ("" for JSON) and returns every line it sends until its
// timeoutSeconds end it.
func watchLines(t *testing.T, b *Berth, path, token, accept string) []string {
	t.Helper()
	req, _ := http.NewRequest("GET", b.URL(path), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch %s: %s", path, resp.Status)
	}
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// TestResumedWatchDoesNotLeakTrustedObjects is the attack of a push
// client on the watch: it takes a ConfigMap's and a pod's name first, the
// trusted file source declares both (with a secret value), the push client
// deletes its own, waits until the file source's run, and resumes a watch
// from the resourceVersion of its earlier list. The watch may report its
// own objects' deletion, with the state it could see, and nothing of the
// file source's, as JSON or as kubectl's Tables.
func TestResumedWatchDoesNotLeakTrustedObjects(t *testing.T) {
	b, admin, push := startWithPush(t)
	ctx := context.Background()
	cs := kubeClient(t, b, push)
	grace := int64(2)
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"},
		Data: map[string]string{"password": "mine"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("push create configmap x: %v", err)
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"},
		Spec: v1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []v1.Container{{Name: "app", Image: testImage,
			Args: []string{"sleep"}, Env: []v1.EnvVar{{Name: "SECRET", Value: "mine"}}}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("push create pod x: %v", err)
	}
	waitPodRunning(t, b.Node, "x", "app")
	cms, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(cms.Items) != 1 {
		t.Fatalf("push list of configmaps: %v %v", cms, err)
	}
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("push list of pods: %v %v", pods, err)
	}

	secret := "hunter2-" + randHex(6)
	writeFile(t, b.Pods, "x.yaml", fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: x}
data: {password: %[1]s}
---
apiVersion: v1
kind: Pod
metadata: {name: x}
spec:
  terminationGracePeriodSeconds: 2
  containers:
    - name: trusted
      image: %[2]q
      args: [sleep]
      env:
        - {name: SECRET, value: %[1]s}
        - name: FROM_CM
          valueFrom: {configMapKeyRef: {name: x, key: password}}
`, secret, testImage))
	if err := cs.CoreV1().ConfigMaps("default").Delete(ctx, "x", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("push delete configmap x: %v", err)
	}
	if err := cs.CoreV1().Pods("default").Delete(ctx, "x", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("push delete pod x: %v", err)
	}
	// Watched on the engine only: no API request may see the change
	// before the resumed watch does.
	ids := waitPodRunning(t, b.Node, "x", "trusted")
	if env := containerEnv(t, ids["trusted"]); !slices.Contains(env, "FROM_CM="+secret) {
		t.Fatalf("the file pod x runs without the file ConfigMap x: %v", env)
	}

	const table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
	for _, tc := range []struct{ name, path, from, accept string }{
		{"configmaps", "/api/v1/namespaces/default/configmaps", cms.ResourceVersion, ""},
		{"pods", "/api/v1/namespaces/default/pods", pods.ResourceVersion, ""},
		{"configmaps as Table", "/api/v1/namespaces/default/configmaps", cms.ResourceVersion, table},
		{"pods as Table", "/api/v1/namespaces/default/pods", pods.ResourceVersion, table},
	} {
		lines := watchLines(t, b, tc.path+"?watch=true&includeObject=Object&timeoutSeconds=2&resourceVersion="+tc.from, push, tc.accept)
		deleted := false
		for _, l := range lines {
			if strings.Contains(l, secret) || strings.Contains(l, `"berth.io/source":"file"`) {
				t.Errorf("%s: the push token's resumed watch carries the file source's x: %s", tc.name, l)
			}
			if strings.HasPrefix(l, `{"type":"DELETED"`) && strings.Contains(l, `"name":"x"`) {
				deleted = true
			}
		}
		if !deleted {
			t.Errorf("%s: the resumed watch does not report x deleted: %q", tc.name, lines)
		}
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("push GET of the file ConfigMap x: %v, want NotFound", err)
	}
	// The admin sees the file source's x, a new object.
	got, err := kubeClient(t, b, admin).CoreV1().ConfigMaps("default").Get(ctx, "x", metav1.GetOptions{})
	if err != nil || got.Data["password"] != secret {
		t.Fatalf("admin GET of configmap x: %v %v", got, err)
	}
}
