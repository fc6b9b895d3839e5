package server

import (
	"net/http"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Patterns reports every mounted pattern, whichever way it was mounted.
func TestPatternsListsEveryMountedRoute(t *testing.T) {
	s := New(Options{Registry: prometheus.NewRegistry()})
	s.Handle("GET /extra", http.NotFoundHandler())
	RegisterPush(s, "push", map[string]http.Handler{"POST /pods": http.NotFoundHandler()})
	got := s.Patterns()
	for _, want := range []string{"GET /healthz", "GET /readyz", "GET /metrics", "GET /pods", "GET /pods/{ns}/{name}", "GET /events", "GET /extra", "POST /pods"} {
		if !slices.Contains(got, want) {
			t.Errorf("Patterns() = %q, lacks %q", got, want)
		}
	}
}
