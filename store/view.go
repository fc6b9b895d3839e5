package store

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/berth-dev/berth/model"
)

// View reads the store inside one of its write transactions: what a check
// reads through it cannot change before the transaction's own write.
//
// Misuse: a View is valid only during the call it was given to; kept
// beyond it, it reads an aborted or committed transaction.
type View struct{ txn *memdb.Txn }

// Pods returns every desired pod, ordered by key.
func (v View) Pods() ([]*model.Pod, error) { return podsIn(v.txn, nil, IndexID) }

// Pod returns the desired pod with key, or nil.
func (v View) Pod(key string) (*model.Pod, error) {
	raw, err := v.txn.First(TablePods, IndexID, key)
	if err != nil {
		return nil, fmt.Errorf("pod lookup: %w", err)
	}
	p, _ := raw.(*model.Pod)
	return p, nil
}

// PodsBySource returns the desired pods owned by source.
func (v View) PodsBySource(source string) ([]*model.Pod, error) {
	return podsIn(v.txn, nil, IndexSource, source)
}

// ContainersByPod returns the actual containers labelled with pod key.
func (v View) ContainersByPod(key string) ([]*model.Container, error) {
	it, err := v.txn.Get(TableContainers, IndexPod, key)
	if err != nil {
		return nil, fmt.Errorf("container list: %w", err)
	}
	var out []*model.Container
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out = append(out, raw.(*model.Container))
	}
	return out, nil
}

// Source returns the registered source name, or nil.
func (v View) Source(name string) (*model.Source, error) {
	raw, err := v.txn.First(TableSources, IndexID, name)
	if err != nil {
		return nil, fmt.Errorf("source lookup: %w", err)
	}
	if raw == nil {
		return nil, nil
	}
	return raw.(*model.Source), nil
}

// ObjectsBySource returns the objects of kind owned by source.
func (v View) ObjectsBySource(kind, source string) ([]*model.Object, error) {
	return objectsIn(v.txn, nil, kind, IndexSource, source)
}

// Object returns the object of kind with key, or nil.
func (v View) Object(kind, key string) (*model.Object, error) { return objectIn(v.txn, nil, kind, key) }

// SourceWrite is a source's state after one update: its pods (replaced as
// ReplaceSourcePods does), its objects (replaced alike: unchanged pointers
// are not rewritten) and its source row (nil: left as it is).
type SourceWrite struct {
	Pods []*model.Pod
	// Partial makes Pods the source's new and changed pods only and
	// Removed the keys of its pods to delete, Objects its new and changed
	// objects only and RemovedObjects its objects to delete; its other
	// pods and objects stay as they are.
	Partial        bool
	Removed        []string
	Objects        []*model.Object
	RemovedObjects []*model.Object
	Source         *model.Source
}

// ApplySource decides and writes one update of source in one transaction:
// decide reads the store through a View and returns the source's state
// after the update; no other write comes between the reads and the write.
// Objects are written before pods, and a pod using an object that changed
// is notified, as is every pod with containers when the source row becomes
// synced (notifyOnSync). An error from decide writes nothing.
//
// Misuse: decide runs under the store's write lock; it must not call the
// Store (that deadlocks) nor block.
func (s *Store) ApplySource(source string, decide func(View) (SourceWrite, error)) error {
	txn := newWrite(s)
	defer txn.Abort()
	w, err := decide(View{txn.Txn})
	if err != nil {
		return err
	}
	pods, src := w.Pods, w.Source
	if w.Partial {
		if err := txn.changeSourceObjects(source, w.Objects, w.RemovedObjects); err != nil {
			return err
		}
		if err := txn.changeSourcePods(source, pods, w.Removed); err != nil {
			return err
		}
	} else {
		if err := txn.replaceSourceObjects(source, w.Objects); err != nil {
			return err
		}
		if err := txn.replaceSourcePods(source, pods); err != nil {
			return err
		}
	}
	if src != nil {
		if src.Name != source {
			return fmt.Errorf("source row %q written for source %q", src.Name, source)
		}
		if err := txn.putSource(src); err != nil {
			return err
		}
	}
	return txn.commit()
}
