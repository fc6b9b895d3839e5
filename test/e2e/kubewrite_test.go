package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// kubeClient is a client-go clientset for b's Kubernetes API with token.
func kubeClient(t *testing.T, b *Berth, token string) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: b.URL(""), BearerToken: token})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// containerEnv returns the environment of a container on the engine.
func containerEnv(t *testing.T, id string) []string { return inspect(t, id).Config.Env }

// TestKubeWrites: a pod created through client-go with a push token runs
// on the engine; a strategic merge patch (what client-side kubectl apply
// sends) recreates its container with the change; an invalid edit is a 422
// and the pod keeps running untouched; a file pod refuses deletion naming
// its source; deleting the pushed pod removes its containers and the API
// then answers 404. The node logs answer the admin token only.
func TestKubeWrites(t *testing.T) {
	adminFile, admin := writeToken(t, "admin")
	pushFile, push := writeToken(t, "push")
	logDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(logDir, "node.log"), []byte("0123456789\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := startBerth(t, Options{Env: []string{"BERTH_SERVER_TOKEN_FILE=" + adminFile,
		"BERTH_SOURCES_PUSH_ENABLED=true", "BERTH_SOURCES_PUSH_TOKEN_FILE=" + pushFile,
		"BERTH_SERVER_NODE_LOGS_DIR=" + logDir}})
	ctx := context.Background()
	pods := kubeClient(t, b, push).CoreV1().Pods("default")

	grace := int64(2)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kw", Labels: map[string]string{"app": "kw"}},
		Spec: v1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []v1.Container{{
			Name: "main", Image: testImage, Args: []string{"sleep"}, Env: []v1.EnvVar{{Name: "MESSAGE", Value: "v1"}}}}}}
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	ids := waitPodRunning(t, b.Node, "kw", "main")
	if !slices.Contains(containerEnv(t, ids["main"]), "MESSAGE=v1") {
		t.Fatalf("env of main: %v", containerEnv(t, ids["main"]))
	}
	waitFor(t, waitLong, "kw Running in the API", func() (bool, string) {
		p, err := pods.Get(ctx, "kw", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return p.Status.Phase == v1.PodRunning && p.UID == created.UID, string(p.Status.Phase)
	})

	smp := `{"spec":{"$setElementOrder/containers":[{"name":"main"}],"containers":[{"name":"main","env":[{"name":"MESSAGE","value":"v2"}]}]}}`
	if _, err := pods.Patch(ctx, "kw", types.StrategicMergePatchType, []byte(smp), metav1.PatchOptions{FieldValidation: "Strict"}); err != nil {
		t.Fatalf("patch: %v", err)
	}
	waitFor(t, waitLong, "main recreated with MESSAGE=v2", func() (bool, string) {
		run := running(podContainers(t, b.Node, "kw"))["main"]
		if len(run) != 1 || run[0] == ids["main"] {
			return false, describe(podContainers(t, b.Node, "kw"))
		}
		env := containerEnv(t, run[0])
		return slices.Contains(env, "MESSAGE=v2"), strings.Join(env, " ")
	})
	ids = waitPodRunning(t, b.Node, "kw", "main")

	bad := `{"spec":{"containers":[{"name":"main","image":""}]}}`
	_, err = pods.Patch(ctx, "kw", types.StrategicMergePatchType, []byte(bad), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.containers[0].image") {
		t.Fatalf("invalid patch: %v", err)
	}
	assertStable(t, b.Node, "kw", ids, pollEvery*10)

	writeFile(t, b.Pods, "trusted.yaml", sleeper("trusted"))
	adminPods := kubeClient(t, b, admin).CoreV1().Pods("default")
	waitFor(t, waitLong, "trusted in the API", func() (bool, string) {
		_, err := adminPods.Get(ctx, "trusted", metav1.GetOptions{})
		return err == nil, errString(err)
	})
	err = adminPods.Delete(ctx, "trusted", metav1.DeleteOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "source file") {
		t.Fatalf("delete of a file pod with the admin token: %v", err)
	}
	if err := pods.Delete(ctx, "trusted", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) || strings.Contains(err.Error(), b.Pods) {
		t.Fatalf("delete of a file pod with the push token: %v", err)
	}

	if err := pods.Delete(ctx, "kw", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	// As in Kubernetes, the pod is served Terminating until its containers
	// stopped, then it is gone.
	waitFor(t, waitLong, "kw gone from the API", func() (bool, string) {
		p, err := pods.Get(ctx, "kw", metav1.GetOptions{})
		if err == nil && p.DeletionTimestamp == nil {
			t.Fatalf("get after delete: kw without deletionTimestamp")
		}
		return apierrors.IsNotFound(err), errString(err)
	})
	waitPodGone(t, b.Node, "kw")

	for _, tc := range []struct {
		token, path string
		code        int
	}{
		{admin, "/logs/node.log", 200},
		{admin, "/api/v1/nodes/" + b.Node + "/proxy/logs/node.log", 200},
		{push, "/logs/node.log", 403},
	} {
		code, body := authDo(t, "GET", b.URL(tc.path), tc.token, "")
		if code != tc.code || (code == 200 && body != "0123456789\n") {
			t.Errorf("GET %s: %d %q, want %d", tc.path, code, body, tc.code)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
