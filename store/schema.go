package store

import memdb "github.com/hashicorp/go-memdb"

// Table names.
const (
	TablePods       = "pods"
	TableContainers = "containers"
	TableSources    = "sources"
	TableTombstones = "tombstones"
)

// Index names.
const (
	IndexID     = "id"
	IndexSource = "source"
	IndexPod    = "pod"
)

func schema() *memdb.DBSchema {
	return &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		TablePods:       podsTableSchema(),
		TableContainers: containersTableSchema(),
		TableSources:    sourcesTableSchema(),
		TableTombstones: tombstonesTableSchema(),
	}}
}

func podsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TablePods,
		Indexes: map[string]*memdb.IndexSchema{
			IndexID:     {Name: IndexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Key"}},
			IndexSource: {Name: IndexSource, AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "Source"}},
		},
	}
}

func containersTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableContainers,
		Indexes: map[string]*memdb.IndexSchema{
			IndexID:  {Name: IndexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
			IndexPod: {Name: IndexPod, AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "PodKey"}},
		},
	}
}

func sourcesTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableSources,
		Indexes: map[string]*memdb.IndexSchema{
			IndexID: {Name: IndexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
		},
	}
}

func tombstonesTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableTombstones,
		Indexes: map[string]*memdb.IndexSchema{
			IndexID: {Name: IndexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
		},
	}
}
