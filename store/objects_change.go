package store

import (
	"fmt"

	"github.com/berth-dev/berth/model"
)

// changeSourceObjects writes a Partial SourceWrite's objects: objs, the
// source's new and changed objects, over what is stored, and removes gone,
// the source's objects to delete (looked up again by kind and key; one
// another source holds now stays). The pods using each object written or
// removed are notified. The other objects of the source are not read.
func (txn *writeTxn) changeSourceObjects(source string, objs, gone []*model.Object) error {
	for _, g := range gone {
		table := objectTable(g.Kind)
		if table == "" {
			return fmt.Errorf("%s %s: unknown kind", g.Kind, g.Key)
		}
		raw, err := txn.First(table, IndexID, g.Key)
		if err != nil {
			return fmt.Errorf("object lookup: %w", err)
		}
		cur, _ := raw.(*model.Object)
		if cur == nil || cur.Source != source {
			continue
		}
		if err := txn.remove(table, cur.Key, cur); err != nil {
			return fmt.Errorf("object delete: %w", err)
		}
		if err := txn.claimLeft(cur); err != nil {
			return err
		}
		if err := txn.notifyUsers(model.ObjectRef(cur.Kind, cur.Key)); err != nil {
			return err
		}
	}
	for _, o := range objs {
		if o.Source != source {
			return fmt.Errorf("%s %s: source %q written as %q", o.Kind, o.Key, o.Source, source)
		}
		table := objectTable(o.Kind)
		if table == "" {
			return fmt.Errorf("%s %s: unknown kind", o.Kind, o.Key)
		}
		raw, err := txn.First(table, IndexID, o.Key)
		if err != nil {
			return fmt.Errorf("object lookup: %w", err)
		}
		cur, _ := raw.(*model.Object)
		if cur != nil && cur.Source != source {
			return fmt.Errorf("%s %s: source %q's, written as %q's", o.Kind, o.Key, cur.Source, source)
		}
		if cur != nil && sameObject(o, cur) {
			continue
		}
		if err := txn.putObject(table, cur, o); err != nil {
			return err
		}
		if err := txn.notifyUsers(model.ObjectRef(o.Kind, o.Key)); err != nil {
			return err
		}
	}
	return nil
}
