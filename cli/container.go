package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// defaultContainerAnnotation names the container kubectl logs and exec
// use when -c is not given.
const defaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

// defaultContainer fetches the pod and names the container that logs and
// exec use without -c, writing kubectl's "Defaulted container" note to
// stderr when there was a choice.
func defaultContainer(ctx context.Context, c *apiClient, cs *kubernetes.Clientset, ns, pod string, stderr io.Writer) (string, error) {
	p, err := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		return "", c.kubeError(ctx, err)
	}
	name, note, err := pickContainer(p)
	if err != nil {
		return "", err
	}
	if note != "" {
		fmt.Fprintln(stderr, note)
	}
	return name, nil
}

// pickContainer is kubectl's choice without -c: the default-container
// annotation's container if it names one, else the first, with a note
// naming the others when there were others to choose.
func pickContainer(p *v1.Pod) (name, note string, err error) {
	if len(p.Spec.Containers) == 0 {
		return "", "", fmt.Errorf("pod %s/%s has no containers", p.Namespace, p.Name)
	}
	if want := p.Annotations[defaultContainerAnnotation]; want != "" {
		for _, ct := range p.Spec.Containers {
			if ct.Name == want {
				return want, "", nil
			}
		}
	}
	first := p.Spec.Containers[0].Name
	if len(p.Spec.Containers) == 1 && len(p.Spec.InitContainers) == 0 {
		return first, "", nil
	}
	var all []string
	for _, ct := range p.Spec.Containers {
		all = append(all, ct.Name)
	}
	for _, ct := range p.Spec.InitContainers {
		all = append(all, ct.Name+" (init)")
	}
	return first, fmt.Sprintf("Defaulted container %q out of: %s", first, strings.Join(all, ", ")), nil
}
