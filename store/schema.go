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
)

// Index names.
const (
	IndexID     = "id"
	IndexSource = "source"
	IndexPod    = "pod"
	// IndexRef indexes pods by the ObjectRefs they use (model.Pod.Refs).
	IndexRef = "ref"
	// IndexTerminal indexes the pods that ended (model.Pod.Terminal set).
	IndexTerminal = "terminal"
)

func schema() *memdb.DBSchema {
	return &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		TablePods:       podsTableSchema(),
		TableContainers: containersTableSchema(),
		TableSources:    sourcesTableSchema(),
		TableTombstones: tombstonesTableSchema(),
		TableConfigMaps: configMapsTableSchema(),
		TableSecrets:    secretsTableSchema(),
		TableClaims:     claimsTableSchema(),
	}}
}

func podsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TablePods,
		Indexes: map[string]*memdb.IndexSchema{
			IndexID:       {Name: IndexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Key"}},
			IndexSource:   {Name: IndexSource, AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "Source"}},
			IndexRef:      {Name: IndexRef, AllowMissing: true, Indexer: &memdb.StringSliceFieldIndex{Field: "Refs"}},
			IndexTerminal: {Name: IndexTerminal, AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "Terminal"}},
		},
	}
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
