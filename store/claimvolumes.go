package store

import (
	"fmt"
	"maps"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/berth-dev/berth/model"
)

// TableClaimVolumes holds the engine volumes of the claims (ClaimVolumes),
// keyed like the claims.
const TableClaimVolumes = "claimvolumes"

// ClaimVolumes are the engine volumes holding the data of the claim at Key
// (namespace/name), by the source whose pods made each (every source has
// its own claims' data): a source's claim is bound once its volume
// exists. A row whose last volume went stays, empty, while a claim is
// declared at Key, so that the claim's version (the newer of both rows')
// never goes back. Never to be modified.
type ClaimVolumes struct {
	model.Version
	Key     string
	Volumes map[string]string // source → engine volume
}

func claimVolumesTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableClaimVolumes,
		Indexes: map[string]*memdb.IndexSchema{
			IndexID:     {Name: IndexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Key"}},
			IndexModify: modifyIndex("Key"),
		},
	}
}

// SetClaimVolume records that volume holds the data of source's claim key
// (a pod of source made it, or it was found at start), or with volume ""
// that it is gone; what is already recorded is no write.
func (s *Store) SetClaimVolume(source, key, volume string) error {
	w := newWrite(s)
	defer w.Abort()
	raw, err := w.First(TableClaimVolumes, IndexID, key)
	if err != nil {
		return fmt.Errorf("claim volume lookup: %w", err)
	}
	cur, _ := raw.(*ClaimVolumes)
	if cur != nil && cur.Volumes[source] == volume || cur == nil && volume == "" {
		return nil
	}
	next := &ClaimVolumes{Key: key, Volumes: map[string]string{}}
	if cur != nil {
		next.Version, next.Volumes = cur.Version, maps.Clone(cur.Volumes)
	}
	if volume == "" {
		delete(next.Volumes, source)
	} else {
		next.Volumes[source] = volume
	}
	if len(next.Volumes) == 0 { // cur's last volume went
		claim, err := objectIn(w.Txn, nil, model.KindPVC, key)
		if err != nil {
			return err
		}
		if claim == nil {
			if err := w.remove(TableClaimVolumes, key, cur); err != nil {
				return fmt.Errorf("claim volume delete: %w", err)
			}
			return w.commit()
		}
	}
	if cur != nil {
		if err := w.keepPast(TableClaimVolumes, key, cur, true); err != nil {
			return err
		}
	}
	if err := w.insert(TableClaimVolumes, next, cur == nil); err != nil {
		return fmt.Errorf("claim volume insert: %w", err)
	}
	return w.commit()
}

// dropEmptyClaimVolumes removes the row of claim key when it holds no
// volume: called as the claim leaves the store.
func (w *writeTxn) dropEmptyClaimVolumes(key string) error {
	raw, err := w.First(TableClaimVolumes, IndexID, key)
	if err != nil {
		return fmt.Errorf("claim volume lookup: %w", err)
	}
	if cur, ok := raw.(*ClaimVolumes); ok && len(cur.Volumes) == 0 {
		return w.remove(TableClaimVolumes, key, cur)
	}
	return nil
}

// ClaimVolumes returns the volumes of claim key, or nil.
func (r Snapshot) ClaimVolumes(key string) (*ClaimVolumes, error) {
	raw, err := r.txn.First(TableClaimVolumes, IndexID, key)
	if err != nil {
		return nil, fmt.Errorf("claim volume lookup: %w", err)
	}
	v, _ := raw.(*ClaimVolumes)
	return v, nil
}

// AllClaimVolumes returns every claim's volumes, ordered by key.
func (r Snapshot) AllClaimVolumes() ([]*ClaimVolumes, error) {
	it, err := r.txn.Get(TableClaimVolumes, IndexID)
	if err != nil {
		return nil, fmt.Errorf("claim volume list: %w", err)
	}
	var out []*ClaimVolumes
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out = append(out, raw.(*ClaimVolumes))
	}
	return out, nil
}
