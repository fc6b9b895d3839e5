package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/kubeapi"
	"github.com/berth-dev/berth/store"
)

// Refusals and unknown paths under /api are Status objects, which kubectl
// turns into "Error from server (Reason): message".
func TestKubeRoutesAnswerStatus(t *testing.T) {
	st, _ := store.New(nil)
	s := New(Options{Store: st, Tokens: []string{"admin"}, PushTokens: []string{"push"}})
	RegisterKube(s, kubeapi.New(kubeapi.Options{Store: st, Visible: s.Visible}).Routes())
	srv := httptest.NewServer(s)
	defer srv.Close()
	for _, tc := range []struct {
		token, path string
		code        int
		reason      metav1.StatusReason
	}{
		{"", "/api/v1/nosuch", http.StatusUnauthorized, metav1.StatusReasonUnauthorized},
		{"admin", "/api/v1/nosuch", http.StatusNotFound, metav1.StatusReasonNotFound},
		{"admin", "/apis/nosuch.example/v1", http.StatusNotFound, metav1.StatusReasonNotFound},
	} {
		code, body := do(t, "GET", srv.URL+tc.path, tc.token, nil)
		var got metav1.Status
		err := json.Unmarshal([]byte(body), &got)
		if tc.code == http.StatusNotFound && got.Details == nil {
			t.Errorf("%s: 404 without details; kubectl debug dereferences them", tc.path)
		}
		if tc.code == http.StatusUnauthorized && got.Message != "Unauthorized" {
			t.Errorf("401 message %q, want the apiserver's Unauthorized", got.Message)
		}
		if err != nil || code != tc.code || got.Kind != "Status" || got.Reason != tc.reason || got.Code != int32(tc.code) {
			t.Errorf("%s with token %q: %d %+v (decode: %v), want %d %s", tc.path, tc.token, code, got, err, tc.code, tc.reason)
		}
	}
}
