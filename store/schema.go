package store

import memdb "github.com/hashicorp/go-memdb"

// Table names.
const (
	TablePods       = "pods"
	TableContainers = "containers"
	TableSources    = "sources"
	TableTombstones = "tombstones"
	TableConfigMaps = "configmaps"
	TableSecrets    = "secrets"
	TableClaims     = "persistentvolumeclaims"
	// TableIndexes holds the latest index of each table (indexRow).
	TableIndexes = "indexes"
	// TableDeletions keeps the rows write transactions removed (Deletion).
	TableDeletions = "deletions"
	// TableTerminating holds the pods removed while their containers
	// still run (Terminating).
	TableTerminating = "terminating"
	// TableEvents holds the recorded events (EventRow).
	TableEvents = "events"
)

// Index names.
const (
	IndexID     = "id"
	IndexSource = "source"
	IndexPod    = "pod"
	// IndexRef indexes pods by the ObjectRefs they use (model.Pod.Refs).
	IndexRef = "ref"
	// IndexModify orders a table's rows by the index that last wrote them
	// (a Deletion's by the index that removed it).
	IndexModify = "modify"
	// IndexCreate orders events by the index that recorded them.
	IndexCreate = "create"
	// IndexSimilar indexes events by what makes two the same event
	// (everything but the time); its argument is an events.Event.
	IndexSimilar = "similar"
	// IndexLast orders events by the index of their last occurrence
	// (EventRow.LastIndex): the least recent goes first when full.
	IndexLast = "last"
	// IndexNodeSource orders the node events of each source by their last
	// occurrence; its argument is the source's name (a prefix lookup).
	IndexNodeSource = "nodesource"
	// IndexKey indexes deletions by table, key and index.
	IndexKey = "key"
	// IndexTable indexes deletions by table and index.
	IndexTable = "table"
)

func schema() *memdb.DBSchema {
	return &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		TablePods:         podsTableSchema(),
		TableContainers:   containersTableSchema(),
		TableSources:      sourcesTableSchema(),
		TableTombstones:   tombstonesTableSchema(),
		TableConfigMaps:   configMapsTableSchema(),
		TableSecrets:      secretsTableSchema(),
		TableClaims:       claimsTableSchema(),
		TableClaimVolumes: claimVolumesTableSchema(),
		TableIndexes: {Name: TableIndexes, Indexes: map[string]*memdb.IndexSchema{
			IndexID: {Name: IndexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Table"}},
		}},
		TableDeletions:   deletionsTableSchema(),
		TableTerminating: terminatingTableSchema(),
		TableEvents: {Name: TableEvents, Indexes: map[string]*memdb.IndexSchema{
			IndexID:      {Name: IndexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Key"}},
			IndexModify:  modifyIndex("Key"),
			IndexSimilar: {Name: IndexSimilar, Indexer: similarIndexer{}},
			IndexCreate: {Name: IndexCreate, Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
				&memdb.UintFieldIndex{Field: "CreateIndex"}, &memdb.StringFieldIndex{Field: "Key"},
			}}},
			IndexLast: {Name: IndexLast, Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
				&memdb.UintFieldIndex{Field: "LastIndex"}, &memdb.StringFieldIndex{Field: "Key"},
			}}},
			IndexNodeSource: {Name: IndexNodeSource, Unique: true, AllowMissing: true, Indexer: nodeSourceIndexer{}},
		}},
		TableRequests: requestsTableSchema(),
	}}
}

func podsTableSchema() *memdb.TableSchema {
	indexes := holdsIndexes()
	for name, ix := range map[string]*memdb.IndexSchema{
		IndexID:     {Name: IndexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Key"}},
		IndexSource: {Name: IndexSource, AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "Source"}},
		IndexRef:    {Name: IndexRef, AllowMissing: true, Indexer: &memdb.StringSliceFieldIndex{Field: "Refs"}},
		IndexModify: modifyIndex("Key"),
	} {
		indexes[name] = ix
	}
	return &memdb.TableSchema{Name: TablePods, Indexes: indexes}
}

func configMapsTableSchema() *memdb.TableSchema { return objectsTableSchema(TableConfigMaps) }

func secretsTableSchema() *memdb.TableSchema { return objectsTableSchema(TableSecrets) }

func claimsTableSchema() *memdb.TableSchema { return objectsTableSchema(TableClaims) }

// objectsTableSchema is the schema of a table of model.Objects of one kind,
// keyed by namespace/name.
func objectsTableSchema(name string) *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: name,
		Indexes: map[string]*memdb.IndexSchema{
			IndexID:     {Name: IndexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Key"}},
			IndexSource: {Name: IndexSource, Indexer: &memdb.StringFieldIndex{Field: "Source"}},
			IndexModify: modifyIndex("Key"),
		},
	}
}

func containersTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableContainers,
		Indexes: map[string]*memdb.IndexSchema{
			IndexID:     {Name: IndexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
			IndexPod:    {Name: IndexPod, AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "PodKey"}},
			IndexSource: {Name: IndexSource, AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "Source"}},
			IndexModify: modifyIndex("ID"),
		},
	}
}

func sourcesTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableSources,
		Indexes: map[string]*memdb.IndexSchema{
			IndexID:     {Name: IndexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
			IndexModify: modifyIndex("Name"),
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

// modifyIndex is the IndexModify of a versioned table: rows by ModifyIndex
// and key, so that the rows written after an index are a range.
func modifyIndex(key string) *memdb.IndexSchema {
	return &memdb.IndexSchema{Name: IndexModify, Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
		&memdb.UintFieldIndex{Field: "ModifyIndex"}, &memdb.StringFieldIndex{Field: key},
	}}}
}

func deletionsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableDeletions,
		Indexes: map[string]*memdb.IndexSchema{
			IndexID:     {Name: IndexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
			IndexModify: {Name: IndexModify, Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{&memdb.UintFieldIndex{Field: "Index"}, &memdb.StringFieldIndex{Field: "ID"}}}},
			IndexTable: {Name: IndexTable, Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
				&memdb.StringFieldIndex{Field: "Table"}, &memdb.UintFieldIndex{Field: "Index"}, &memdb.StringFieldIndex{Field: "Key"},
			}}},
			IndexKey: {Name: IndexKey, Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
				&memdb.StringFieldIndex{Field: "Table"}, &memdb.StringFieldIndex{Field: "Key"}, &memdb.UintFieldIndex{Field: "Index"},
			}}},
		},
	}
}

func terminatingTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableTerminating,
		Indexes: map[string]*memdb.IndexSchema{
			IndexID:     {Name: IndexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Key"}},
			IndexModify: modifyIndex("Key"),
		},
	}
}
