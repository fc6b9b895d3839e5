package stream

import (
	"context"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/runtime"
)

// Attacher attaches to a container's main process (runtime.Docker and
// runtime/fake satisfy it); o.Cmd is unused.
type Attacher interface {
	Attach(ctx context.Context, id string, o runtime.ExecOptions) error
}

// serveAttach answers pods/{name}/attach as exec does its streams: the
// session ends when the process's output ends or the client goes, with
// the kubelet's Success or InternalError status.
func (s *streams) serveAttach(at Attacher) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.serveSession(w, r, false, func(ctx context.Context, id string, q execQuery, sess *execSession) {
			st := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusSuccess}}
			if err := at.Attach(ctx, id, sess.options(ctx, q)); err != nil && ctx.Err() == nil {
				st = apierrors.NewInternalError(fmt.Errorf("error attaching to container: %w", err))
			}
			_ = sess.writeStatus(st)
		})
	}
}
