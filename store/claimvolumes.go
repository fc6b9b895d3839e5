package store

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/berth-dev/berth/model"
)

// TableClaimVolumes holds the engine volumes of the claims (ClaimVolume),
// one row per source's claim.
const TableClaimVolumes = "claimvolumes"

// ClaimVolume is the engine volume holding the data of Source's claim
// Claim (namespace/name): every source has its own claims' data, and a
// source's claim is bound once its own volume exists; another source's
// volume at the same namespace/name is none of its. A row whose volume
// went stays, with Volume "", while Source declares the claim, so that
// the claim's version (the newer of both rows') never goes back. ID is
// ClaimVolumeID(Source, Claim). Never to be modified.
type ClaimVolume struct {
	model.Version
	ID     string
	Source string
	Claim  string
	Volume string
}

// ClaimVolumeID is the ID of source's claim key's row.
func ClaimVolumeID(source, key string) string { return source + "/" + key }

func claimVolumesTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableClaimVolumes,
		Indexes: map[string]*memdb.IndexSchema{
			IndexID:     {Name: IndexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
			IndexModify: modifyIndex("ID"),
		},
	}
}

// SetClaimVolume records that volume holds the data of source's claim key
// (a pod of source made it, or it was found at start), or with volume ""
// that it is gone; what is already recorded is no write.
func (s *Store) SetClaimVolume(source, key, volume string) error {
	w := newWrite(s)
	defer w.Abort()
	id := ClaimVolumeID(source, key)
	raw, err := w.First(TableClaimVolumes, IndexID, id)
	if err != nil {
		return fmt.Errorf("claim volume lookup: %w", err)
	}
	cur, _ := raw.(*ClaimVolume)
	if cur != nil && cur.Volume == volume || cur == nil && volume == "" {
		return nil
	}
	if volume == "" {
		claim, err := objectIn(w.Txn, nil, model.KindPVC, key)
		if err != nil {
			return err
		}
		if claim == nil || claim.Source != source { // none to keep the version of
			if err := w.remove(TableClaimVolumes, id, cur); err != nil {
				return fmt.Errorf("claim volume delete: %w", err)
			}
			return w.commit()
		}
	}
	next := &ClaimVolume{ID: id, Source: source, Claim: key, Volume: volume}
	if cur != nil {
		next.Version = cur.Version
		if err := w.keepPast(TableClaimVolumes, id, cur, true); err != nil {
			return err
		}
	}
	if err := w.insert(TableClaimVolumes, next, cur == nil); err != nil {
		return fmt.Errorf("claim volume insert: %w", err)
	}
	return w.commit()
}

// claimLeft removes the row of claim o's volume when it holds none: called
// as o leaves the store (removed, or its key taken by another source's).
// Any other object is no write.
func (w *writeTxn) claimLeft(o *model.Object) error {
	if o.Kind != model.KindPVC {
		return nil
	}
	id := ClaimVolumeID(o.Source, o.Key)
	raw, err := w.First(TableClaimVolumes, IndexID, id)
	if err != nil {
		return fmt.Errorf("claim volume lookup: %w", err)
	}
	if cur, ok := raw.(*ClaimVolume); ok && cur.Volume == "" {
		return w.remove(TableClaimVolumes, id, cur)
	}
	return nil
}

// ClaimVolume returns the row of source's claim key, or nil.
func (r Snapshot) ClaimVolume(source, key string) (*ClaimVolume, error) {
	raw, err := r.txn.First(TableClaimVolumes, IndexID, ClaimVolumeID(source, key))
	if err != nil {
		return nil, fmt.Errorf("claim volume lookup: %w", err)
	}
	v, _ := raw.(*ClaimVolume)
	return v, nil
}

// ClaimVolumeAt returns the row of source's claim key as it was at index
// (nil: none then), from the kept past of the rows changed since: index
// must be at or after the table's compaction floor (as Changes' since).
func (r Snapshot) ClaimVolumeAt(source, key string, index uint64) (*ClaimVolume, error) {
	row, err := r.rowAt(TableClaimVolumes, ClaimVolumeID(source, key), index)
	v, _ := row.(*ClaimVolume)
	return v, err
}

// rowAt returns the row of table at key as it was at index: the row now
// when written at or before index, else the version that the first write
// after index replaced or removed, when it existed at index.
func (r Snapshot) rowAt(table, key string, index uint64) (any, error) {
	raw, err := r.txn.First(table, IndexID, key)
	if err != nil {
		return nil, fmt.Errorf("%s lookup: %w", table, err)
	}
	if raw != nil && raw.(model.Versioned).Current().ModifyIndex <= index {
		return raw, nil
	}
	it, err := r.txn.LowerBound(TableDeletions, IndexKey, table, key, index+1)
	if err != nil {
		return nil, fmt.Errorf("%s history: %w", table, err)
	}
	if raw := it.Next(); raw != nil {
		if d := raw.(*Deletion); d.Table == table && d.Key == key && d.Last.(model.Versioned).Current().CreateIndex <= index {
			return d.Last, nil
		}
	}
	return nil, nil
}

// AllClaimVolumes returns the row of every source's claim, ordered by ID.
func (r Snapshot) AllClaimVolumes() ([]*ClaimVolume, error) {
	it, err := r.txn.Get(TableClaimVolumes, IndexID)
	if err != nil {
		return nil, fmt.Errorf("claim volume list: %w", err)
	}
	var out []*ClaimVolume
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out = append(out, raw.(*ClaimVolume))
	}
	return out, nil
}
