package printers

import (
	"encoding/json"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Object is what every served kind is: a typed object with metadata.
type Object interface {
	runtime.Object
	metav1.Object
}

// Cells prints one object's row of a kind's Table, ages at now.
type Cells func(obj runtime.Object, now time.Time) ([]any, []metav1.TableRowCondition)

var (
	NameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."}
	AgeColumn  = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."}
)

// ClaimCells are the cells of kubectl's printPersistentVolumeClaim.
func ClaimCells(o runtime.Object, now time.Time) ([]any, []metav1.TableRowCondition) {
	c := o.(*v1.PersistentVolumeClaim)
	phase := string(c.Status.Phase)
	if c.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	capacity, modes := "", ""
	if c.Spec.VolumeName != "" {
		modes = AccessModes(c.Status.AccessModes)
		if q, ok := c.Status.Capacity[v1.ResourceStorage]; ok {
			capacity = q.String()
		}
	}
	class := ""
	if c.Spec.StorageClassName != nil {
		class = *c.Spec.StorageClassName
	} else if v, ok := c.Annotations[v1.BetaStorageClassAnnotation]; ok {
		class = v
	}
	vac, mode := "<unset>", "<unset>"
	if c.Spec.VolumeAttributesClassName != nil && *c.Spec.VolumeAttributesClassName != "" {
		vac = *c.Spec.VolumeAttributesClassName
	}
	if c.Spec.VolumeMode != nil {
		mode = string(*c.Spec.VolumeMode)
	}
	return []any{c.Name, phase, c.Spec.VolumeName, capacity, modes, class, vac, Age(c.CreationTimestamp, now), mode}, nil
}

// AccessModes is kubectl's GetAccessModesAsString: RWO,ROX,RWX,RWOP.
func AccessModes(modes []v1.PersistentVolumeAccessMode) string {
	has := map[v1.PersistentVolumeAccessMode]bool{}
	for _, m := range modes {
		has[m] = true
	}
	var out []string
	for _, m := range []struct {
		mode  v1.PersistentVolumeAccessMode
		short string
	}{{v1.ReadWriteOnce, "RWO"}, {v1.ReadOnlyMany, "ROX"}, {v1.ReadWriteMany, "RWX"}, {v1.ReadWriteOncePod, "RWOP"}} {
		if has[m.mode] {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}

// EventColumns are kubectl's event columns.
var EventColumns = []metav1.TableColumnDefinition{
	{Name: "Last Seen", Type: "string", Description: "The time at which the most recent occurrence of this event was recorded."},
	{Name: "Type", Type: "string", Description: "Type of this event (Normal, Warning), new types could be added in the future"},
	{Name: "Reason", Type: "string", Description: "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."},
	{Name: "Object", Type: "string", Description: "The object that this event is about."},
	{Name: "Subobject", Type: "string", Priority: 1, Description: "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement."},
	{Name: "Source", Type: "string", Priority: 1, Description: "The component reporting this event."},
	{Name: "Message", Type: "string", Description: "A human-readable description of the status of this operation."},
	{Name: "First Seen", Type: "string", Priority: 1, Description: "The time at which the event was first recorded."},
	{Name: "Count", Type: "string", Priority: 1, Description: "The number of times this event has occurred."},
	{Name: "Name", Type: "string", Format: "name", Priority: 1, Description: "Name must be unique within a namespace."},
}

// EventCells are the cells of kubectl's printEvent.
func EventCells(o runtime.Object, now time.Time) ([]any, []metav1.TableRowCondition) {
	e := o.(*v1.Event)
	first := Age(e.FirstTimestamp, now)
	if e.FirstTimestamp.IsZero() {
		first = Age(metav1.Time{Time: e.EventTime.Time}, now)
	}
	last := Age(e.LastTimestamp, now)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last, count = Age(metav1.Time{Time: e.Series.LastObservedTime.Time}, now), e.Series.Count
	} else if count == 0 {
		count = 1
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}
	source := e.Source.Component
	if e.Source.Host != "" {
		source += ", " + e.Source.Host
	}
	return []any{last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath, source, strings.TrimSpace(e.Message),
		first, int64(count), e.Name}, nil
}

// Row is o's row: its cells, and its object as include asks.
func Row(o Object, cells Cells, now time.Time, include metav1.IncludeObjectPolicy) (metav1.TableRow, error) {
	c, conds := cells(o, now)
	row := metav1.TableRow{Cells: c, Conditions: conds}
	var obj runtime.Object
	switch include {
	case metav1.IncludeMetadata:
		m := &metav1.PartialObjectMetadata{ObjectMeta: *metaOf(o)}
		m.APIVersion, m.Kind = "meta.k8s.io/v1", "PartialObjectMetadata"
		obj = m
	case metav1.IncludeObject:
		obj = o
	}
	if obj != nil {
		raw, err := json.Marshal(obj)
		if err != nil {
			return row, err
		}
		row.Object = runtime.RawExtension{Raw: raw}
	}
	return row, nil
}

// metaOf returns o's ObjectMeta (a copy).
func metaOf(o Object) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{
		Name: o.GetName(), Namespace: o.GetNamespace(), UID: o.GetUID(), ResourceVersion: o.GetResourceVersion(),
		Generation: o.GetGeneration(), CreationTimestamp: o.GetCreationTimestamp(), DeletionTimestamp: o.GetDeletionTimestamp(),
		DeletionGracePeriodSeconds: o.GetDeletionGracePeriodSeconds(), Labels: o.GetLabels(), Annotations: o.GetAnnotations(),
		OwnerReferences: o.GetOwnerReferences(), Finalizers: o.GetFinalizers(),
	}
}

// Table prints objs as a Table of columns and cells, ages at now, each
// row's object as include asks; headers false leaves out the column
// definitions.
func Table(objs []Object, columns []metav1.TableColumnDefinition, cells Cells, now time.Time, include metav1.IncludeObjectPolicy, headers bool) (*metav1.Table, error) {
	t := &metav1.Table{TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/v1"}, Rows: make([]metav1.TableRow, 0, len(objs))}
	if headers {
		t.ColumnDefinitions = columns
	}
	for _, o := range objs {
		row, err := Row(o, cells, now, include)
		if err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}
