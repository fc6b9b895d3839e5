package server

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/kubeapi"
	"github.com/berth-dev/berth/model"
)

// RegisterKube mounts the Kubernetes API routes behind the token scopes:
// AccessRead as GET /pods (push tokens filtered by Visible), AccessWrite as
// the push routes, AccessExec as exec, AccessNodeLogs as /logs/,
// AccessAdmin as the admin routes.
// Refusals are Kubernetes Status objects, as kubectl expects.
func RegisterKube(s *Server, routes []kubeapi.Route) {
	for _, rt := range routes {
		a := accessAdmin
		switch rt.Access {
		case kubeapi.AccessRead:
			a = accessPods
		case kubeapi.AccessWrite:
			a = accessPush
		case kubeapi.AccessExec:
			a = accessExec
		case kubeapi.AccessNodeLogs:
			a = accessNodeLogs
		}
		h := rt.Handler
		if rt.Access == kubeapi.AccessWrite {
			h = http.MaxBytesHandler(h, MaxPushBody)
		}
		s.mux.Handle(rt.Pattern, s.guardWith(a, logRoute(rt.Pattern), h, kubeRefusal))
	}
}

// Visible reports whether r's token may see p: push tokens see the push
// source's pods only. Valid inside handlers mounted by the server.
func (s *Server) Visible(r *http.Request, p *model.Pod) bool { return s.visible(r, p) }

func kubeRefusal(w http.ResponseWriter, code int, msg string) {
	if code == http.StatusTooManyRequests {
		kubeapi.WriteError(w, apierrors.NewTooManyRequests(msg, retryAfter))
		return
	}
	reason := metav1.StatusReasonForbidden
	if code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="berth"`)
		reason = metav1.StatusReasonUnauthorized
		if msg == "unauthorized" {
			msg = "Unauthorized" // the apiserver's word, which kubectl prints
		}
	}
	kubeapi.WriteStatus(w, code, reason, msg)
}
