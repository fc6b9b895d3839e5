package e2e

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestPushTokenSeesItsOwnNamespaces: through the real agent's token
// scopes, a push token lists default and its own source's namespaces, not
// the file source's, and the node counts its pods only; the admin token
// sees every namespace and pod.
func TestPushTokenSeesItsOwnNamespaces(t *testing.T) {
	b, admin, push := startWithPush(t)
	writeFile(t, b.Pods, "trusted.yaml", withMeta(sleeper("trusted"), "trusted", "trusted-ns", "trusted"))
	writeFile(t, b.Pods, "trusted2.yaml", withMeta(sleeper("trusted2"), "trusted2", "trusted-ns", "trusted"))
	if code, body := authDo(t, "POST", b.URL("/pods/push-ns/pushed"), push, withMeta(sleeper("pushed"), "pushed", "push-ns", "pushed")); code != http.StatusCreated {
		t.Fatalf("push: %d %s", code, body)
	}
	namespaces := func(token string) []string {
		t.Helper()
		code, body := authDo(t, "GET", b.URL("/api/v1/namespaces"), token, "")
		var l v1.NamespaceList
		if err := json.Unmarshal([]byte(body), &l); code != http.StatusOK || err != nil {
			t.Fatalf("namespaces: %d %v %s", code, err, body)
		}
		var out []string
		for _, n := range l.Items {
			out = append(out, n.Name)
		}
		return out
	}
	podCount := func(token string) string {
		t.Helper()
		code, body := authDo(t, "GET", b.URL("/api/v1/nodes/"+b.Node), token, "")
		var n v1.Node
		if err := json.Unmarshal([]byte(body), &n); code != http.StatusOK || err != nil {
			t.Fatalf("node: %d %v %s", code, err, body)
		}
		return n.Annotations["berth.io/pods"]
	}
	waitFor(t, waitLong, "the admin sees both sources' pods", func() (bool, string) {
		got := strings.Join(namespaces(admin), ",")
		return got == "default,push-ns,trusted-ns" && podCount(admin) == "3", got + " pods " + podCount(admin)
	})
	if got := namespaces(push); !slices.Equal(got, []string{"default", "push-ns"}) {
		t.Errorf("push token namespaces %q, want default and push-ns", got)
	}
	if code, body := authDo(t, "GET", b.URL("/api/v1/namespaces/trusted-ns"), push, ""); code != http.StatusNotFound {
		t.Errorf("push token get namespace trusted-ns: %d %s", code, body)
	}
	if got := podCount(push); got != "1" {
		t.Errorf("push token node pod count %s, want 1", got)
	}
}
