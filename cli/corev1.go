package cli

import (
	"context"
	"io"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// The core/v1 calls of the client commands, as client-go's typed
// CoreV1().Pods() and Events() make them, over the REST client kube
// returns. Errors are client-go's (see kubeError).

func getPod(ctx context.Context, rc *rest.RESTClient, ns, name string) (*v1.Pod, error) {
	p := &v1.Pod{}
	err := rc.Get().Namespace(ns).Resource("pods").Name(name).Do(ctx).Into(p)
	return p, err
}

func listPods(ctx context.Context, rc *rest.RESTClient, ns string, opts metav1.ListOptions) (*v1.PodList, error) {
	l := &v1.PodList{}
	err := rc.Get().Namespace(ns).Resource("pods").VersionedParams(&opts, scheme.ParameterCodec).Do(ctx).Into(l)
	return l, err
}

func watchPodList(ctx context.Context, rc *rest.RESTClient, ns string, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return rc.Get().Namespace(ns).Resource("pods").VersionedParams(&opts, scheme.ParameterCodec).Watch(ctx)
}

func podLogs(ctx context.Context, rc *rest.RESTClient, ns, name string, opts *v1.PodLogOptions) (io.ReadCloser, error) {
	return rc.Get().Namespace(ns).Resource("pods").Name(name).SubResource("log").VersionedParams(opts, scheme.ParameterCodec).Stream(ctx)
}

func listEvents(ctx context.Context, rc *rest.RESTClient, ns string, opts metav1.ListOptions) (*v1.EventList, error) {
	l := &v1.EventList{}
	err := rc.Get().Namespace(ns).Resource("events").VersionedParams(&opts, scheme.ParameterCodec).Do(ctx).Into(l)
	return l, err
}
