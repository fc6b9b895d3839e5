package registry

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/berth-dev/berth/kubeapi/printers"

	memdb "github.com/hashicorp/go-memdb"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

// WithheldAnnotation ("true") on a Secret says its data values are not
// served: only its keys are, with empty values.
const WithheldAnnotation = "berth.io/data-withheld"

// firstSeen remembers when the API first saw each object without a
// creationTimestamp of its own, its served creationTimestamp.
type firstSeen struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (f *firstSeen) get(key string, now time.Time) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.at == nil {
		f.at = map[string]time.Time{}
	}
	if t, ok := f.at[key]; ok {
		return t
	}
	f.at[key] = now.Truncate(time.Second)
	return f.at[key]
}

// keep forgets the objects not in keys (gone from the store).
func (f *firstSeen) keep(keys map[string]bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range f.at {
		if !keys[k] {
			delete(f.at, k)
		}
	}
}

// objectMeta completes meta of a stored object as the API serves it:
// berth's annotations, a uid derived from kind and key when it has none,
// and a creationTimestamp when berth first saw it.
func (a *kinds) objectMeta(meta *metav1.ObjectMeta, o *model.Object, seen *firstSeen) {
	meta.Annotations = cloneMap(meta.Annotations)
	meta.Annotations[SourceAnnotation] = o.Source
	meta.Annotations[OriginAnnotation] = o.Origin
	if o.Error != "" {
		meta.Annotations[RejectedAnnotation] = o.Error
	}
	if a.o.PushSource == "" || o.Source != a.o.PushSource {
		meta.Annotations[ReadOnlyAnnotation] = "true"
	}
	meta.UID = ObjectUID(o)
	if meta.CreationTimestamp.IsZero() {
		meta.CreationTimestamp = metav1.Time{Time: seen.get(o.Ref, a.o.Clock.Now())}
	}
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+4)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// objectsKind is the stored kind of the objects of kind, rendered by
// render, whose first-seen times are in seen.
func (a *kinds) objectsKind(kind string, seen *firstSeen, render func(*model.Object) Object) *storeKind {
	itemOf := func(o *model.Object) item { return item{Key: o.Key, Obj: render(o), Source: o.Source} }
	return &storeKind{
		tables: []string{store.ObjectTable(kind)},
		rows: func(snap store.Snapshot, ws memdb.WatchSet) ([]any, error) {
			return a.objectRows(snap, ws, kind, seen, func(o *model.Object) (any, error) { return o, nil })
		},
		row: func(snap store.Snapshot, key string) (any, error) {
			o, err := snap.Object(kind, key)
			if o == nil || err != nil {
				return nil, err
			}
			return o, nil
		},
		render: func(row any) item { return itemOf(row.(*model.Object)) },
		gone:   func(d *store.Deletion) item { return itemOf(d.Last.(*model.Object)) },
	}
}

// objectRows lists kind's objects in snap, ordered by key, each as the row
// as makes of it. A list of the store as it is forgets the first-seen
// times of the objects it lacks (gone: an older snapshot may lack an
// object created since).
func (a *kinds) objectRows(snap store.Snapshot, ws memdb.WatchSet, kind string, seen *firstSeen, as func(*model.Object) (any, error)) ([]any, error) {
	objs, err := snap.Objects(ws, kind)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(objs))
	keys := make(map[string]bool, len(objs))
	for i, o := range objs {
		keys[o.Ref] = true
		if out[i], err = as(o); err != nil {
			return nil, err
		}
	}
	if snap.Index() == a.o.Store.Index() {
		seen.keep(keys)
	}
	return out, nil
}

func (a *kinds) configMapsResource() *Kind {
	seen := &firstSeen{}
	return &Kind{
		Name: "configmaps", Writable: true, Singular: "configmap", Kind: "ConfigMap", ShortNames: []string{"cm"}, Namespaced: true,
		APIVersion: "v1", ListKind: "ConfigMapList",
		Zero: func() Object { return &v1.ConfigMap{} },
		stored: a.objectsKind(model.KindConfigMap, seen, func(o *model.Object) Object {
			cm := o.ConfigMap.DeepCopy()
			cm.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
			a.objectMeta(&cm.ObjectMeta, o, seen)
			return cm
		}),
		Columns: []metav1.TableColumnDefinition{printers.NameColumn,
			{Name: "Data", Type: "integer", Description: "Data contains the configuration data."}, printers.AgeColumn},
		Cells: func(o runtime.Object, now time.Time) ([]any, []metav1.TableRowCondition) {
			cm := o.(*v1.ConfigMap)
			return []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), printers.Age(cm.CreationTimestamp, now)}, nil
		},
	}
}

func (a *kinds) secretsResource() *Kind {
	seen := &firstSeen{}
	return &Kind{
		Name: "secrets", Writable: true, Singular: "secret", Kind: "Secret", Namespaced: true,
		APIVersion: "v1", ListKind: "SecretList",
		Zero: func() Object { return &v1.Secret{} },
		stored: a.objectsKind(model.KindSecret, seen, func(o *model.Object) Object {
			s := &v1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: *o.Secret.ObjectMeta.DeepCopy(),
				Immutable: o.Secret.Immutable, Type: o.Secret.Type, Data: o.Secret.Data, StringData: o.Secret.StringData}
			if s.Type == "" {
				s.Type = v1.SecretTypeOpaque
			}
			a.objectMeta(&s.ObjectMeta, o, seen)
			WithholdSecret(s)
			return s
		}),
		Fields: func(o runtime.Object) fields.Set { return fields.Set{"type": string(o.(*v1.Secret).Type)} },
		Columns: []metav1.TableColumnDefinition{printers.NameColumn,
			{Name: "Type", Type: "string", Description: "Used to facilitate programmatic handling of secret data."},
			{Name: "Data", Type: "integer", Description: "Data contains the secret data."}, printers.AgeColumn},
		Cells: func(o runtime.Object, now time.Time) ([]any, []metav1.TableRowCondition) {
			s := o.(*v1.Secret)
			return []any{s.Name, string(s.Type), int64(len(s.Data)), printers.Age(s.CreationTimestamp, now)}, nil
		},
	}
}

// withheldLastApplied is kubectl apply's last-applied configuration of a
// Secret with its values emptied: kubectl apply still finds it (no warning,
// removed keys are removed) and no value is served; a next apply sends
// every value again.
func withheldLastApplied(last string) string {
	var m map[string]any
	if json.Unmarshal([]byte(last), &m) != nil {
		return ""
	}
	for _, field := range []string{"data", "stringData"} {
		if values, ok := m[field].(map[string]any); ok {
			for k := range values {
				values[k] = ""
			}
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// WithholdSecret makes s the Secret as the API serves it: every key of
// data and stringData in data with an empty value, the last-applied
// annotation's values emptied, WithheldAnnotation set. It replaces s's maps
// rather than changing them, so s may share them with the store.
func WithholdSecret(s *v1.Secret) {
	data := make(map[string][]byte, len(s.Data)+len(s.StringData))
	for k := range s.Data {
		data[k] = []byte{}
	}
	for k := range s.StringData {
		data[k] = []byte{}
	}
	s.Data, s.StringData = data, nil
	s.Annotations = cloneMap(s.Annotations)
	s.Annotations[WithheldAnnotation] = "true"
	if last, ok := s.Annotations[v1.LastAppliedConfigAnnotation]; ok {
		s.Annotations[v1.LastAppliedConfigAnnotation] = withheldLastApplied(last)
	}
}
