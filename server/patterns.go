package server

import (
	"net/http"
	"slices"
)

// patternMux is a ServeMux that remembers the patterns mounted on it.
type patternMux struct {
	*http.ServeMux
	patterns []string
}

func newPatternMux() *patternMux { return &patternMux{ServeMux: http.NewServeMux()} }

func (m *patternMux) Handle(pattern string, h http.Handler) {
	m.ServeMux.Handle(pattern, h)
	m.patterns = append(m.patterns, pattern)
}

func (m *patternMux) HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(f))
}

// Patterns lists the ServeMux patterns ("GET /pods/{ns}/{name}") mounted so
// far, in mount order: what the API answers, for its documentation check.
func (s *Server) Patterns() []string { return slices.Clone(s.mux.patterns) }
