package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// tablePrinter prints the server's Table rows as kubectl does: the
// columns of priority 0 (all with wide), NAMESPACE first for every
// namespace's pods, EVENT first with --output-watch-events (ADDED for the
// list's rows); wide adds berth's SOURCE and ORIGIN (the pod's
// annotations) last. It prints the header before the first row, and no
// watch row identical to the last one printed for the same pod (a change
// to what no column shows); a DELETED row always, as kubectl.
type tablePrinter struct {
	t                   *table
	wide, allNS, events bool
	// nodes prints the Node column first, not among the wide ones.
	nodes bool

	cols    []metav1.TableColumnDefinition
	started bool
	last    map[string]string
}

func (p *tablePrinter) header() []string {
	var h []string
	if p.nodes {
		h = append(h, "NODE")
	}
	if p.events {
		h = append(h, "EVENT")
	}
	if p.allNS {
		h = append(h, "NAMESPACE")
	}
	for _, c := range p.cols {
		if p.shows(c) {
			h = append(h, strings.ToUpper(c.Name))
		}
	}
	if p.wide {
		h = append(h, "SOURCE", "ORIGIN")
	}
	return h
}

// shows reports whether c is printed among the Table's columns.
func (p *tablePrinter) shows(c metav1.TableColumnDefinition) bool {
	return (c.Priority == 0 || p.wide) && !(p.nodes && c.Name == "Node")
}

// print prints t's rows; event is the watch event's type ("" for a list).
func (p *tablePrinter) print(t *metav1.Table, event string) error {
	if p.cols == nil {
		p.cols = t.ColumnDefinitions
	}
	if p.last == nil {
		p.last = map[string]string{}
	}
	var rows [][]string
	for _, r := range t.Rows {
		var m metav1.PartialObjectMetadata
		if len(r.Object.Raw) > 0 {
			if err := json.Unmarshal(r.Object.Raw, &m); err != nil {
				return fmt.Errorf("a Table row's object: %w", err)
			}
		}
		var row []string
		if p.nodes {
			for i, c := range p.cols {
				if c.Name == "Node" && i < len(r.Cells) {
					row = append(row, cellString(r.Cells[i]))
				}
			}
		}
		if p.events {
			row = append(row, cmp.Or(event, "ADDED"))
		}
		if p.allNS {
			row = append(row, m.Namespace)
		}
		for i, c := range p.cols {
			if i < len(r.Cells) && p.shows(c) {
				row = append(row, cellString(r.Cells[i]))
			}
		}
		if p.wide {
			row = append(row, m.Annotations["berth.io/source"], m.Annotations["berth.io/origin"])
		}
		key, line := m.Namespace+"/"+m.Name, strings.Join(row, "\x00")
		switch {
		case event != "" && event != string(watch.Deleted) && p.last[key] == line:
			continue
		case event == string(watch.Deleted):
			delete(p.last, key)
		default:
			p.last[key] = line
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil
	}
	if !p.started {
		p.started = true
		rows = append([][]string{p.header()}, rows...)
		if p.events && len(p.t.widths) == 0 {
			p.t.widths = []int{len(watch.Modified)} // the widest event: rows stay under the header
		}
	}
	return p.t.write(rows...)
}

// cellString is a Table cell as kubectl prints it.
func cellString(c any) string {
	switch v := c.(type) {
	case nil:
		return "<none>"
	case string:
		return v
	case float64:
		if v == math.Trunc(v) {
			return fmt.Sprintf("%d", int64(v))
		}
	}
	return fmt.Sprint(c)
}

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
		if err := json.Unmarshal(ev.Object.Raw, &t); err != nil {
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
