package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// tableAccept asks the API for a Table, as kubectl does.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

// getQuery is what berth get pods asks the API for.
type getQuery struct {
	namespace string   // "" for every namespace
	names     []string // none: the list
	selector  string
	allNS     bool // print the NAMESPACE column
}

func (f getFlags) query(names []string) getQuery {
	q := getQuery{namespace: f.namespace, names: names, selector: f.selector}
	switch {
	case f.allNamespaces:
		q.namespace = ""
	case q.namespace == "" && len(names) > 0:
		q.namespace = "default" // as kubectl: a name is in a namespace
	}
	q.allNS = q.namespace == ""
	return q
}

// getPods is berth get pods against the located berth's Kubernetes API:
// the server's Table rows for the table formats, the objects for the
// others, then with -w every change.
func getPods(ctx context.Context, c *apiClient, f getFlags, names []string, stdout, stderr io.Writer) error {
	out, err := parseOutput(f.output)
	if err != nil {
		return err
	}
	q := f.query(names)
	if f.watch && len(names) > 1 {
		return errors.New("--watch takes one NAME at most")
	}
	cs, _, err := c.kube()
	if err != nil {
		return err
	}
	if out.table() {
		p := newTablePrinter(stdout, out.kind == "wide", q.allNS, f.watch && f.watchEvents, false)
		rv, err := c.listTable(ctx, cs, q, p, stderr)
		if err != nil || !f.watch {
			return err
		}
		return c.watchTable(ctx, cs, q, rv, p)
	}
	po, err := newObjectPrinter(stdout, out, f.watchEvents)
	if err != nil {
		return err
	}
	list, missing, err := c.listPods(ctx, cs, q, stderr)
	if err != nil {
		return err
	}
	if !f.watch {
		if len(names) == 1 && len(list.Items) == 1 {
			return po.print(&list.Items[0])
		}
		if err := po.print(list); err != nil {
			return err
		}
		return missing
	}
	for i := range list.Items {
		if err := po.event("ADDED", &list.Items[i]); err != nil {
			return err
		}
	}
	return c.watchObjects(ctx, cs, q, list.ResourceVersion, po)
}

// podsRequest is a GET of q's pods (name "" for the list).
func podsRequest(cs *kubernetes.Clientset, q getQuery, name string) *rest.Request {
	req := cs.CoreV1().RESTClient().Get().Resource("pods").Namespace(q.namespace)
	if name != "" {
		req = req.Name(name)
	}
	if q.selector != "" {
		req = req.Param("labelSelector", q.selector)
	}
	return req
}

// listTable prints q's pods as the server's Table and returns the list's
// resourceVersion. A name not found is reported on stderr after the rows,
// as kubectl does, and makes the error.
func (c *apiClient) listTable(ctx context.Context, cs *kubernetes.Clientset, q getQuery, p *tablePrinter, stderr io.Writer) (string, error) {
	var tables []*metav1.Table
	var missing []error
	rv := ""
	get := func(name string) error {
		res := podsRequest(cs, q, name).SetHeader("Accept", tableAccept).Do(ctx)
		if err := res.Error(); err != nil { // Error, not Raw's, has the Status
			return c.kubeError(ctx, err)
		}
		raw, _ := res.Raw()
		t := &metav1.Table{}
		if err := decodeTable(raw, t); err != nil || t.Kind != "Table" {
			return fmt.Errorf("berth at %s: the pods' answer is no Table (%v): %.200s", c.server, err, raw)
		}
		tables = append(tables, t)
		rv = t.ResourceVersion
		if rv == "" && len(t.Rows) == 1 { // a GET's one row: its object's version
			var m metav1.PartialObjectMetadata
			if json.Unmarshal(t.Rows[0].Object.Raw, &m) == nil {
				rv = m.ResourceVersion
			}
		}
		return nil
	}
	if len(q.names) == 0 {
		if err := get(""); err != nil {
			return "", err
		}
	}
	for _, n := range q.names {
		if err := get(n); err != nil {
			if len(q.names) == 1 || !strings.HasPrefix(err.Error(), "Error from server (NotFound)") {
				return "", err
			}
			missing = append(missing, err)
		}
	}
	var merged metav1.Table
	for _, t := range tables {
		if merged.ColumnDefinitions == nil {
			merged.ColumnDefinitions = t.ColumnDefinitions
		}
		merged.Rows = append(merged.Rows, t.Rows...)
	}
	if len(merged.Rows) == 0 && len(missing) == 0 {
		if q.allNS {
			fmt.Fprintln(stderr, "No resources found")
		} else {
			fmt.Fprintf(stderr, "No resources found in %s namespace.\n", q.namespace)
		}
	}
	if err := p.print(&merged, ""); err != nil {
		return "", err
	}
	for _, err := range missing {
		fmt.Fprintln(stderr, err)
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("%d of %d pods not found", len(missing), len(q.names))
	}
	return rv, nil
}

// listPods returns q's pods as objects, with kubectl's kinds filled in.
// Names not found are reported on stderr, as kubectl does, and make
// missing.
func (c *apiClient) listPods(ctx context.Context, cs *kubernetes.Clientset, q getQuery, stderr io.Writer) (list *v1.PodList, missing, err error) {
	list = &v1.PodList{}
	if len(q.names) == 0 {
		if list, err = cs.CoreV1().Pods(q.namespace).List(ctx, metav1.ListOptions{LabelSelector: q.selector}); err != nil {
			return nil, nil, c.kubeError(ctx, err)
		}
	}
	n := 0
	for _, name := range q.names {
		p, err := cs.CoreV1().Pods(q.namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			err = c.kubeError(ctx, err)
			if len(q.names) == 1 || !strings.HasPrefix(err.Error(), "Error from server (NotFound)") {
				return nil, nil, err
			}
			fmt.Fprintln(stderr, err)
			n++
			continue
		}
		list.Items = append(list.Items, *p)
		list.ResourceVersion = p.ResourceVersion
	}
	if n > 0 {
		missing = fmt.Errorf("%d of %d pods not found", n, len(q.names))
	}
	list.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "List"}
	for i := range list.Items {
		list.Items[i].TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	}
	return list, missing, nil
}

// watchOptions are the options of q's watch from resourceVersion rv.
func (q getQuery) watchOptions(rv string) metav1.ListOptions {
	o := metav1.ListOptions{LabelSelector: q.selector, ResourceVersion: rv, Watch: true, AllowWatchBookmarks: true}
	if len(q.names) == 1 {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", q.names[0]).String()
	}
	return o
}
