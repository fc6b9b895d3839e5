package store

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/berth-dev/berth/model"
)

// ObjectTable is the table of objects of kind, "" for an unknown kind.
func ObjectTable(kind string) string { return objectTable(kind) }

func objectTable(kind string) string {
	switch kind {
	case model.KindConfigMap:
		return TableConfigMaps
	case model.KindSecret:
		return TableSecrets
	case model.KindPVC:
		return TableClaims
	}
	return ""
}

// Object returns the object of kind with key (namespace/name), or nil.
func (s *Store) Object(ws memdb.WatchSet, kind, key string) (*model.Object, error) {
	return objectIn(s.db.Txn(false), ws, kind, key)
}

func objectIn(txn *memdb.Txn, ws memdb.WatchSet, kind, key string) (*model.Object, error) {
	table := objectTable(kind)
	if table == "" {
		return nil, fmt.Errorf("object lookup: unknown kind %q", kind)
	}
	ch, raw, err := txn.FirstWatch(table, IndexID, key)
	if err != nil {
		return nil, fmt.Errorf("object lookup: %w", err)
	}
	ws.Add(ch)
	if raw == nil {
		return nil, nil
	}
	return raw.(*model.Object), nil
}

func objectsIn(txn *memdb.Txn, ws memdb.WatchSet, kind, index string, args ...any) ([]*model.Object, error) {
	table := objectTable(kind)
	if table == "" {
		return nil, fmt.Errorf("object list: unknown kind %q", kind)
	}
	it, err := txn.Get(table, index, args...)
	if err != nil {
		return nil, fmt.Errorf("object list: %w", err)
	}
	ws.Add(it.WatchCh())
	var out []*model.Object
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out = append(out, raw.(*model.Object))
	}
	return out, nil
}

// replaceSourceObjects makes objs the complete set of objects owned by
// source, as replaceSourcePods does for pods; every pod using an object
// that changed or went is notified.
func (txn *writeTxn) replaceSourceObjects(source string, objs []*model.Object) error {
	want := map[string]*model.Object{}
	for _, o := range objs {
		if o.Source != source {
			return fmt.Errorf("%s %s: source %q written as %q", o.Kind, o.Key, o.Source, source)
		}
		if objectTable(o.Kind) == "" {
			return fmt.Errorf("%s %s: unknown kind", o.Kind, o.Key)
		}
		want[model.ObjectRef(o.Kind, o.Key)] = o
	}
	for _, kind := range model.ObjectKinds {
		have, err := objectsIn(txn.Txn, nil, kind, IndexSource, source)
		if err != nil {
			return err
		}
		for _, o := range have {
			ref := model.ObjectRef(o.Kind, o.Key)
			next, ok := want[ref]
			switch {
			case !ok:
				if err := txn.remove(objectTable(kind), o.Key, o); err != nil {
					return fmt.Errorf("object delete: %w", err)
				}
				if err := txn.claimLeft(o); err != nil {
					return err
				}
				if err := txn.notifyUsers(ref); err != nil {
					return err
				}
			case sameObject(next, o):
				delete(want, ref) // unchanged
			}
		}
	}
	for ref, o := range want {
		table := objectTable(o.Kind)
		raw, err := txn.First(table, IndexID, o.Key)
		if err != nil {
			return fmt.Errorf("object lookup: %w", err)
		}
		cur, _ := raw.(*model.Object)
		if err := txn.putObject(table, cur, o); err != nil {
			return err
		}
		if err := txn.notifyUsers(ref); err != nil {
			return err
		}
	}
	return nil
}

// sameObject reports whether a and b declare the same object: an equal
// typed value, the same source, origin and rejection. A write of an equal
// object is no write, and takes no version.
func sameObject(a, b *model.Object) bool {
	if a == b {
		return true
	}
	if a.Kind != b.Kind || a.Key != b.Key || a.Source != b.Source || a.Origin != b.Origin || a.Error != b.Error {
		return false
	}
	if a.ConfigMap == b.ConfigMap && a.Secret == b.Secret && a.PVC == b.PVC {
		return true
	}
	return equality.Semantic.DeepEqual(a.ConfigMap, b.ConfigMap) && equality.Semantic.DeepEqual(a.Secret, b.Secret) &&
		equality.Semantic.DeepEqual(a.PVC, b.PVC)
}

// notifyUsers notifies, on commit, every pod using ref.
func (txn *writeTxn) notifyUsers(ref string) error {
	pods, err := podsIn(txn.Txn, nil, IndexRef, ref)
	if err != nil {
		return err
	}
	for _, p := range pods {
		txn.notify(p.Key)
	}
	return nil
}
