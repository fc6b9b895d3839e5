package kubeapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

// TestSecretValueChangeIsAModification: a change to only a Secret's
// values is a change of the Secret, as in Kubernetes: a new
// resourceVersion and a MODIFIED event, while every answer still
// withholds the values and carries nothing they were hashed into (the
// served object equals the one before but for its resourceVersion). The
// same values stored again change nothing.
func TestSecretValueChangeIsAModification(t *testing.T) {
	f := newFixture(t, Options{})
	put := func(password, user string) {
		t.Helper()
		obj := &model.Object{Kind: model.KindSecret, Key: "default/pw", Source: "file", Origin: "a.yaml", Ref: model.ObjectRef(model.KindSecret, "default/pw"),
			Secret: &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pw", Namespace: "default", Annotations: map[string]string{
				v1.LastAppliedConfigAnnotation: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"pw"},"stringData":{"user":"` + user + `"}}`}},
				Data: map[string][]byte{"password": []byte(password)}, StringData: map[string]string{"user": user}}}
		if err := f.st.ApplySource("file", func(store.View) (store.SourceWrite, error) {
			return store.SourceWrite{Objects: []*model.Object{obj}}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	values := []string{"hunter2", "swordfish", "rooty", "admin"}
	noValue := func(what, body string) {
		t.Helper()
		for _, v := range values {
			if strings.Contains(body, v) || strings.Contains(body, base64.StdEncoding.EncodeToString([]byte(v))) {
				t.Fatalf("%s carries the value %q:\n%s", what, v, body)
			}
		}
	}
	put("hunter2", "rooty")
	ctx := context.Background()
	secrets := f.cs.CoreV1().Secrets("default")
	before, err := secrets.Get(ctx, "pw", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/api/v1/namespaces/default/secrets?watch=1&resourceVersion="+before.ResourceVersion, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := make(chan json.RawMessage, 4)
	go func() {
		dec := json.NewDecoder(resp.Body)
		for {
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				close(events)
				return
			}
			events <- raw
		}
	}()

	put("swordfish", "rooty") // only a value changes
	var raw json.RawMessage
	select {
	case raw = <-events:
	case <-time.After(5 * time.Second):
		t.Fatal("no watch event for a change of the values")
	}
	noValue("the watch event", string(raw))
	var ev struct {
		Type   string    `json:"type"`
		Object v1.Secret `json:"object"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil || ev.Type != "MODIFIED" || ev.Object.ResourceVersion == before.ResourceVersion {
		t.Fatalf("want MODIFIED at a new resourceVersion after %s, got %s (%v)", before.ResourceVersion, raw, err)
	}
	after, err := secrets.Get(ctx, "pw", metav1.GetOptions{})
	if err != nil || after.ResourceVersion != ev.Object.ResourceVersion {
		t.Fatalf("GET after the change: %v %v, want resourceVersion %s", after, err, ev.Object.ResourceVersion)
	}
	body, _ := json.Marshal(after)
	noValue("GET", string(body))
	a, b := after.DeepCopy(), before.DeepCopy()
	a.ResourceVersion, b.ResourceVersion = "", ""
	if aj, bj := servedJSON(t, a), servedJSON(t, b); aj != bj {
		t.Fatalf("the served Secret differs beyond its resourceVersion:\n%s\n%s", bj, aj)
	}

	put("swordfish", "admin") // a stringData value and the last-applied one
	select {
	case raw = <-events:
	case <-time.After(5 * time.Second):
		t.Fatal("no watch event for a change of a stringData value")
	}
	noValue("the second watch event", string(raw))

	put("swordfish", "admin") // the same again: a new store object, no change
	cur, err := secrets.Get(ctx, "pw", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case raw := <-events:
		t.Fatalf("an event for values stored again unchanged: %s", raw)
	case <-time.After(200 * time.Millisecond):
	}
	if again, _ := secrets.Get(ctx, "pw", metav1.GetOptions{}); again.ResourceVersion != cur.ResourceVersion {
		t.Fatalf("resourceVersion moved from %s to %s without a change", cur.ResourceVersion, again.ResourceVersion)
	}
}

func servedJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSecretPreconditionSeesAValueChange: a resourceVersion read before a
// change of only a pushed Secret's values is stale after it: a delete
// with it as its precondition is a 409 and deletes nothing.
func TestSecretPreconditionSeesAValueChange(t *testing.T) {
	f := newWriteFixture(t)
	f.createSecret(t, "pw", "value-one")
	get := func() string {
		t.Helper()
		code, _, body := f.do(t, "GET", "/api/v1/namespaces/default/secrets/pw", "", "")
		var s v1.Secret
		if code != http.StatusOK || json.Unmarshal([]byte(body), &s) != nil {
			t.Fatalf("GET: %d %s", code, body)
		}
		return s.ResourceVersion
	}
	before := get()
	if code, _, body := f.do(t, "PUT", "/api/v1/namespaces/default/secrets/pw", "application/json", secretJSON("pw", "value-two")); code != http.StatusOK {
		t.Fatalf("PUT of new values: %d %s", code, body)
	}
	if after := get(); after == before {
		t.Fatalf("resourceVersion %s kept across a change of the values", after)
	}
	code, _, body := f.do(t, "DELETE", "/api/v1/namespaces/default/secrets/pw", "application/json",
		`{"preconditions":{"resourceVersion":"`+before+`"}}`)
	if code != http.StatusConflict {
		t.Fatalf("DELETE with the resourceVersion from before the change: %d %s, want 409", code, body)
	}
	get()
}
