package server

import (
	"context"
	"errors"
	"net/http"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/claims"
)

// Claims lists and deletes the node's PersistentVolumeClaims
// (claims.Service).
type Claims interface {
	List(ctx context.Context) ([]v1.PersistentVolumeClaim, error)
	Delete(ctx context.Context, namespace, name string) error
}

// RegisterClaims serves GET /persistentvolumeclaims (a v1
// PersistentVolumeClaimList) and DELETE /persistentvolumeclaims/{ns}/{name}
// (the claim's data volume: 404 without one, 409 while a pod uses it),
// both for admin tokens only.
func RegisterClaims(s *Server, c Claims) {
	s.Handle("GET /persistentvolumeclaims", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		list, err := c.List(r.Context())
		if err != nil {
			http.Error(w, "persistentvolumeclaims: "+err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, v1.PersistentVolumeClaimList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaimList"}, Items: list})
	}))
	s.Handle("DELETE /persistentvolumeclaims/{ns}/{name}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := c.Delete(r.Context(), r.PathValue("ns"), r.PathValue("name"))
		switch {
		case errors.Is(err, claims.ErrNotFound):
			http.Error(w, err.Error(), http.StatusNotFound)
		case errors.Is(err, claims.ErrInUse):
			http.Error(w, err.Error(), http.StatusConflict)
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		default:
			writeJSON(w, metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusSuccess,
				Details: &metav1.StatusDetails{Name: r.PathValue("name"), Kind: "persistentvolumeclaims"}})
		}
	}))
}
