package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/berth-dev/berth/config"
)

// restConfig is the client-go configuration of the located berth: its URL,
// the token (sent over http:// too, which kubectl's kubeconfig loading
// would not do) and its CA (readCA).
func (c *apiClient) restConfig() (*rest.Config, error) {
	tok, err := c.token()
	if err != nil {
		return nil, err
	}
	var ca []byte
	if c.caFile != "" {
		if ca, err = c.readCA(); err != nil {
			return nil, err
		}
	}
	return &rest.Config{
		Host:            c.server,
		BearerToken:     tok,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca},
		UserAgent:       "berth/" + config.Version,
		QPS:             -1, // one command, a handful of requests: no client-side throttling
		WarningHandler:  rest.NewWarningWriter(os.Stderr, rest.WarningWriterOptions{Deduplicate: true}),
	}, nil
}

// kube returns a clientset for the located berth, and its configuration.
func (c *apiClient) kube() (*kubernetes.Clientset, *rest.Config, error) {
	rc, err := c.restConfig()
	if err != nil {
		return nil, nil, err
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", c.serverFrom, c.server, err)
	}
	return cs, rc, nil
}

// kubeError words an error of a client-go call as berth's commands do: a
// 401 with the way to a token, the server's Status as kubectl prints it
// ("Error from server (NotFound): pods "x" not found"), anything else as
// an unreachable berth. A context's end passes through.
func (c *apiClient) kubeError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// A refused WebSocket upgrade carries the server's Status as its cause;
	// a refused SPDY upgrade only its message.
	var upgrade *httpstream.UpgradeFailureError
	if upgradeStatus(err) && errors.As(err, &upgrade) {
		err = upgrade.Cause
	}
	if msg, ok := strings.CutPrefix(err.Error(), "unable to upgrade connection: "); ok {
		return fmt.Errorf("Error from server: %s", msg)
	}
	if apierrors.IsUnauthorized(err) {
		return c.errUnauthorized()
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		if s.Reason == "" {
			return fmt.Errorf("Error from server: %s", s.Message)
		}
		return fmt.Errorf("Error from server (%s): %s", s.Reason, s.Message)
	}
	return c.errUnreachable(err)
}

// upgradeStatus reports whether err is a refused upgrade with the server's
// Status.
func upgradeStatus(err error) bool {
	var upgrade *httpstream.UpgradeFailureError
	var st apierrors.APIStatus
	return errors.As(err, &upgrade) && upgrade.Cause != nil && errors.As(upgrade.Cause, &st)
}
