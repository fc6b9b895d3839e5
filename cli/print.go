package cli

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/liggitt/tabwriter"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/json"
)

// outputFormat is a parsed -o: one of "", wide, json, yaml, name, or
// jsonpath with its template.
type outputFormat struct {
	kind     string
	template string
}

func parseOutput(o string) (outputFormat, error) {
	if t, ok := strings.CutPrefix(o, "jsonpath="); ok {
		if t == "" {
			return outputFormat{}, errors.New("-o jsonpath= needs a template, e.g. -o jsonpath='{.items[*].metadata.name}'")
		}
		return outputFormat{kind: "jsonpath", template: t}, nil
	}
	switch o {
	case "", "wide", "json", "yaml", "name":
		return outputFormat{kind: o}, nil
	}
	return outputFormat{}, fmt.Errorf("unknown output format %q (want wide, json, yaml, name or jsonpath=TEMPLATE)", o)
}

// table reports whether the format prints a Table.
func (o outputFormat) table() bool { return o.kind == "" || o.kind == "wide" }

// checkOutput refuses an -o the commands printing wide, json or yaml only
// (get nodes, get pvc) do not take.
func checkOutput(output string) error {
	switch output {
	case "", "wide", "json", "yaml":
		return nil
	}
	return fmt.Errorf("unknown output format %q (want wide, json or yaml)", output)
}

// objectPrinter prints pods (or a list of them) as -o json, yaml, name or
// jsonpath with kubectl's printers (k8s.io/cli-runtime/pkg/printers);
// events prints json and yaml watch events whole, as kubectl's
// --output-watch-events does.
type objectPrinter struct {
	w      io.Writer
	kind   string
	events bool
	p      printers.ResourcePrinter
}

// newObjectPrinter is the printer of out (not a table format); a bad
// jsonpath template is an error here, before anything is asked.
func newObjectPrinter(w io.Writer, out outputFormat, events bool) (*objectPrinter, error) {
	p, err := resourcePrinter(out)
	if err != nil {
		return nil, err
	}
	return &objectPrinter{w: w, kind: out.kind, events: events, p: p}, nil
}

func resourcePrinter(out outputFormat) (printers.ResourcePrinter, error) {
	switch out.kind {
	case "json":
		return &printers.JSONPrinter{}, nil
	case "yaml":
		return &printers.YAMLPrinter{}, nil
	case "name":
		return &printers.NamePrinter{}, nil
	case "jsonpath":
		p, err := printers.NewJSONPathPrinter(out.template)
		if err != nil {
			return nil, fmt.Errorf("-o jsonpath: %w", err)
		}
		p.AllowMissingKeys(true) // as kubectl's -o jsonpath
		return p, nil
	}
	return nil, fmt.Errorf("cannot print objects as %q", out.kind)
}

// print prints obj, which carries its kind; a list's items each print
// their name with -o name.
func (p *objectPrinter) print(obj runtime.Object) error {
	if l, ok := obj.(*v1.PodList); ok && p.kind == "name" {
		for i := range l.Items {
			if err := p.p.PrintObj(&l.Items[i], p.w); err != nil {
				return err
			}
		}
		return nil
	}
	if p.kind == "jsonpath" {
		// kubectl prints the server's objects as unstructured, whose
		// integers stay integers (a typed object's would print as floats:
		// 1e+06).
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		obj = &unstructured.Unstructured{Object: m}
	}
	return p.p.PrintObj(obj, p.w)
}

// event prints one watch event's pod.
func (p *objectPrinter) event(typ string, pod *v1.Pod) error {
	pod.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	if p.events && (p.kind == "json" || p.kind == "yaml") {
		return p.print(&metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Object: pod}})
	}
	return p.print(pod)
}

// tablePrinter prints Tables through kubectl's table printer
// (cli-runtime's HumanReadablePrinter): the columns of priority 0 (all
// with wide), NAMESPACE first for every namespace's pods, EVENT first
// with --output-watch-events (ADDED for the list's rows); wide adds
// berth's SOURCE and ORIGIN (the pod's annotations) last. It prints the
// header before the first row, and no watch row identical to the last one
// printed for the same pod (a change to what no column shows); a DELETED
// row always, as kubectl. Its tabwriter remembers column widths, so rows
// printed later by a watch line up under the first table; each print
// reaches out in one write of whole lines.
type tablePrinter struct {
	wide, allNS, events bool
	// nodes prints the Node column first, not among the wide ones.
	nodes bool

	out  io.Writer
	buf  bytes.Buffer
	w    *tabwriter.Writer // writes buf
	p    printers.ResourcePrinter
	cols []metav1.TableColumnDefinition
	last map[string]string
}

func newTablePrinter(out io.Writer, wide, allNS, events, nodes bool) *tablePrinter {
	p := &tablePrinter{wide: wide, allNS: allNS, events: events, nodes: nodes, out: out,
		p: printers.NewTablePrinter(printers.PrintOptions{Wide: wide}), last: map[string]string{}}
	p.w = printers.GetNewTabWriter(&p.buf)
	return p
}

// columns are the printed Table's columns: berth's around the server's.
func (p *tablePrinter) columns() []metav1.TableColumnDefinition {
	var cols []metav1.TableColumnDefinition
	if p.nodes {
		cols = append(cols, metav1.TableColumnDefinition{Name: "Node", Type: "string"})
	}
	if p.allNS {
		cols = append(cols, metav1.TableColumnDefinition{Name: "Namespace", Type: "string"})
	}
	for _, c := range p.cols {
		if !(p.nodes && c.Name == "Node") {
			cols = append(cols, c)
		}
	}
	if p.wide {
		cols = append(cols, metav1.TableColumnDefinition{Name: "Source", Type: "string"}, metav1.TableColumnDefinition{Name: "Origin", Type: "string"})
	}
	return cols
}

// print prints t's rows; event is the watch event's type ("" for a list).
func (p *tablePrinter) print(t *metav1.Table, event string) error {
	if p.cols == nil {
		p.cols = t.ColumnDefinitions
	}
	out := &metav1.Table{ColumnDefinitions: p.columns()}
	for _, r := range t.Rows {
		var m metav1.PartialObjectMetadata
		if len(r.Object.Raw) > 0 {
			if err := json.UnmarshalCaseSensitivePreserveInts(r.Object.Raw, &m); err != nil {
				return fmt.Errorf("a Table row's object: %w", err)
			}
		}
		var cells, shown []any
		if p.nodes {
			for i, c := range p.cols {
				if c.Name == "Node" && i < len(r.Cells) {
					cells = append(cells, r.Cells[i])
				}
			}
		}
		if p.allNS {
			cells = append(cells, m.Namespace)
		}
		shown = append(shown, cells...)
		for i, c := range p.cols {
			if i < len(r.Cells) && !(p.nodes && c.Name == "Node") {
				cells = append(cells, r.Cells[i])
				if c.Priority == 0 || p.wide {
					shown = append(shown, r.Cells[i])
				}
			}
		}
		if p.wide {
			cells = append(cells, m.Annotations["berth.io/source"], m.Annotations["berth.io/origin"])
			shown = append(shown, cells[len(cells)-2:]...)
		}
		key, line := m.Namespace+"/"+m.Name, fmt.Sprintf("%#v", shown)
		switch {
		case event != "" && event != string(watch.Deleted) && p.last[key] == line:
			continue
		case event == string(watch.Deleted):
			delete(p.last, key)
		default:
			p.last[key] = line
		}
		out.Rows = append(out.Rows, metav1.TableRow{Cells: cells})
	}
	if len(out.Rows) == 0 {
		return nil
	}
	var obj runtime.Object = out
	if p.events {
		obj = &metav1.WatchEvent{Type: cmp.Or(event, string(watch.Added)), Object: runtime.RawExtension{Object: out}}
	}
	if err := p.p.PrintObj(obj, p.w); err != nil {
		return err
	}
	if err := p.w.Flush(); err != nil {
		return err
	}
	_, err := p.out.Write(p.buf.Bytes())
	p.buf.Reset()
	return err
}

// decodeTable decodes a Table answer as kubectl's client does: whole
// numbers in cells stay integers.
func decodeTable(raw []byte, t *metav1.Table) error {
	return json.UnmarshalCaseSensitivePreserveInts(raw, t)
}

// printTable prints t with kubectl's table printer, wide with the
// columns of priority 1 too; without rows, it says so on stderr, as
// kubectl does.
func printTable(stdout, stderr io.Writer, t *metav1.Table, wide bool) error {
	if len(t.Rows) == 0 {
		_, err := fmt.Fprintln(stderr, "No resources found")
		return err
	}
	return printers.NewTablePrinter(printers.PrintOptions{Wide: wide}).PrintObj(t, stdout)
}
