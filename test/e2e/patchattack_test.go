package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// patchDo sends method url with a bearer token and a body of type ctype,
// as curl would; a client timeout of 10 s stands for "answered at once"
// (an error, and code 0).
func patchDo(t *testing.T, method, url, token, ctype, body string) (int, string) {
	t.Helper()
	code, text, err := tokenDo(method, url, token, ctype, body)
	if err != nil {
		t.Errorf("%s %s: %v", method, url, err)
	}
	return code, text
}

// TestPatchAttacksWithAPushToken: what a push token's holder tried against
// the Kubernetes API's patches. A JSON patch whose copies double the
// document is refused at the copy limit and berth stays up and small; a
// strategic merge patch of 60 000 containers is refused before merging;
// a dry-run patch of a Secret answers without its values, and a JSON
// patch copying a value where GET serves it is refused.
func TestPatchAttacksWithAPushToken(t *testing.T) {
	b, admin, push := startWithPush(t)
	pods := b.URL("/api/v1/namespaces/default/pods")
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pa"},"spec":{"containers":[{"name":"main","image":"` +
		testImage + `","args":["sleep"]}]}}`
	if code, body := patchDo(t, "POST", pods, push, "application/json", pod); code != http.StatusCreated {
		t.Fatalf("create pa: %d %s", code, body)
	}

	// 1. Copy doubling: 16 doublings of 1 KiB would be 64 MiB of document.
	ops := []string{`{"op":"add","path":"/x","value":["` + strings.Repeat("A", 1024) + `"]}`}
	for range 16 {
		ops = append(ops, `{"op":"copy","from":"/x","path":"/x/-"}`)
	}
	start := time.Now()
	code, body := patchDo(t, "PATCH", pods+"/pa", push, "application/json-patch+json", "["+strings.Join(ops, ",")+"]")
	t.Logf("copy doubling answered %d in %v", code, time.Since(start))
	if (code != http.StatusUnprocessableEntity && code != http.StatusRequestEntityTooLarge) || !strings.Contains(body, "limit") {
		t.Errorf("copy doubling: %d %.300s", code, body)
	}

	// 2. A strategic merge patch of 60 000 containers (1.2 MB).
	var cs []string
	for i := range 60000 {
		cs = append(cs, fmt.Sprintf(`{"name":"c%d","image":"i"}`, i))
	}
	start = time.Now()
	code, body = patchDo(t, "PATCH", pods+"/pa", push, "application/strategic-merge-patch+json",
		`{"spec":{"containers":[`+strings.Join(cs, ",")+`]}}`)
	t.Logf("60 000 containers answered %d in %v", code, time.Since(start))
	if (code != http.StatusUnprocessableEntity && code != http.StatusRequestEntityTooLarge) || !strings.Contains(body, "at most") {
		t.Errorf("60 000 containers: %d %.300s", code, body)
	}

	aliveAndSmall(t, b, admin, "the patches", 512<<20)

	// 3. Secret values: as `kubectl create secret generic db --from-literal`.
	const value = "db-password-hunter2"
	enc := base64.StdEncoding.EncodeToString([]byte(value))
	secrets := b.URL("/api/v1/namespaces/default/secrets")
	secret := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"},"data":{"password":"` + enc + `"}}`
	if code, body := patchDo(t, "POST", secrets, push, "application/json", secret); code != http.StatusCreated {
		t.Fatalf("create secret: %d %s", code, body)
	}
	leaked := func(body string) bool { return strings.Contains(body, value) || strings.Contains(body, enc) }
	code, body = patchDo(t, "PATCH", secrets+"/db?dryRun=All", push, "application/merge-patch+json", `{}`)
	if code != http.StatusOK || leaked(body) {
		t.Errorf("dry-run patch {}: %d %.400s", code, body)
	}
	code, body = patchDo(t, "PATCH", secrets+"/db", push, "application/json-patch+json",
		`[{"op":"add","path":"/metadata/annotations","value":{}},{"op":"copy","from":"/data/password","path":"/metadata/annotations/x"}]`)
	if code != http.StatusUnprocessableEntity || leaked(body) {
		t.Errorf("copy of a value into an annotation: %d %.400s", code, body)
	}
	code, body = patchDo(t, "PATCH", secrets+"/db", push, "application/json-patch+json",
		`[{"op":"test","path":"/data/password","value":"`+enc+`"}]`)
	if code != http.StatusUnprocessableEntity {
		t.Errorf("test of a value: %d %.400s", code, body)
	}
	code, body = patchDo(t, "GET", secrets+"/db", push, "", "")
	var got struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil || leaked(body) || got.Metadata.Annotations["x"] != "" {
		t.Errorf("GET the secret after the patches: %d %.400s", code, body)
	}
}

// aliveAndSmall fails t unless berth b still answers /readyz and its
// resident memory (its own metric, read with token) is at most limit
// bytes, after what (the attack just sent).
func aliveAndSmall(t *testing.T, b *Berth, token, what string, limit float64) {
	t.Helper()
	if code, _ := authDo(t, "GET", b.URL("/readyz"), token, ""); code != http.StatusOK {
		t.Fatalf("berth after %s: /readyz %d", what, code)
	}
	code, text := authDo(t, "GET", b.URL("/metrics"), token, "")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	rss, ok := metricValue(text, "process_resident_memory_bytes")
	t.Logf("berth RSS after %s: %.0f MiB", what, rss/(1<<20))
	if !ok || rss > limit {
		t.Errorf("berth RSS after %s: %.0f MiB, more than %.0f MiB", what, rss/(1<<20), limit/(1<<20))
	}
}
