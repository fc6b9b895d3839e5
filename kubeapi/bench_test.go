package kubeapi

import (
	"fmt"
	"io"
	"net/http"
	"testing"
)

// BenchmarkListPodsTable lists 1000 unchanged pods as kubectl get pods
// does (a Table); the tracker renders each pod once, not per request.
func BenchmarkListPodsTable(b *testing.B) {
	f := newFixture(b, Options{})
	for i := range 1000 {
		f.pod(b, "file", "default", fmt.Sprintf("pod-%04d", i), map[string]string{"app": "x"}, running("10.0.0.2"))
	}
	req, _ := http.NewRequest("GET", f.srv.URL+"/api/v1/pods", nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	b.ResetTimer()
	for b.Loop() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
