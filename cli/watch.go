package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// watchTable prints q's changes from resourceVersion rv as Table rows until
// ctx ends (nil) or the watch does (an error).
func (c *apiClient) watchTable(ctx context.Context, cs *kubernetes.Clientset, q getQuery, rv string, p *tablePrinter) error {
	opts := q.watchOptions(rv)
	body, err := podsRequest(cs, q, "").VersionedParams(&opts, scheme.ParameterCodec).
		SetHeader("Accept", tableAccept).Stream(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return c.kubeError(ctx, err)
	}
	defer body.Close()
	dec := json.NewDecoder(body)
	for {
		var ev metav1.WatchEvent
		if err := dec.Decode(&ev); err != nil {
			return c.watchEnded(ctx, err)
		}
		switch watch.EventType(ev.Type) {
		case watch.Bookmark:
			continue
		case watch.Error:
			return c.watchError(ev.Object.Raw)
		}
		var t metav1.Table
		if err := decodeTable(ev.Object.Raw, &t); err != nil {
			return fmt.Errorf("berth at %s: watch event: %w", c.server, err)
		}
		if err := p.print(&t, ev.Type); err != nil {
			return err
		}
	}
}

// watchObjects prints q's changes from resourceVersion rv as objects until
// ctx ends (nil) or the watch does (an error).
func (c *apiClient) watchObjects(ctx context.Context, cs *kubernetes.Clientset, q getQuery, rv string, po *objectPrinter) error {
	w, err := cs.CoreV1().Pods(q.namespace).Watch(ctx, q.watchOptions(rv))
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return c.kubeError(ctx, err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return c.watchEnded(ctx, io.EOF)
			}
			switch ev.Type {
			case watch.Bookmark:
				continue
			case watch.Error:
				return c.kubeError(ctx, apierrors.FromObject(ev.Object))
			}
			pod, ok := ev.Object.(*v1.Pod)
			if !ok {
				return fmt.Errorf("berth at %s: watch event of %T", c.server, ev.Object)
			}
			if err := po.event(string(ev.Type), pod); err != nil {
				return err
			}
		}
	}
}

// watchEnded is the outcome of a watch stream's end: nil when interrupted.
func (c *apiClient) watchEnded(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("berth at %s: the watch ended", c.server)
	}
	return fmt.Errorf("berth at %s: watch: %w", c.server, err)
}

// watchError words a watch's ERROR event (a Status).
func (c *apiClient) watchError(raw []byte) error {
	var st metav1.Status
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("berth at %s: watch error %.200s", c.server, raw)
	}
	return fmt.Errorf("berth at %s: watch: %s (%s)", c.server, st.Message, st.Reason)
}
