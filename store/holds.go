package store

import (
	"fmt"
	"slices"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/resourcehelper"
)

// Indexes of what desired pods hold on the node, derived from each pod's
// spec by the store itself, so that whoever writes a pod keeps them true.
const (
	// IndexHostPort indexes pods by their host ports' keys
	// (model.HostPort.Key: protocol/port/ip).
	IndexHostPort = "hostport"
	// IndexUID indexes pods by their spec's UID.
	IndexUID = "uid"
	// IndexClaim indexes pods by the keys of the claims they mount
	// (model.ClaimKeys).
	IndexClaim = "claim"
)

// TableRequests holds one row, the requests of the desired pods that have
// not ended, summed by every write of a pod (requestsRow).
const TableRequests = "requests"

type requestsRow struct {
	ID string
	resourcehelper.Requests
}

const requestsID = "pods"

// podKeysIndex indexes pods by the strings keys derives from each, as
// memdb.StringSliceFieldIndex indexes a field: lookups take one string,
// prefix lookups (index name + "_prefix") its start.
type podKeysIndex struct{ keys func(*model.Pod) []string }

func (x podKeysIndex) FromObject(raw any) (bool, [][]byte, error) {
	p, ok := raw.(*model.Pod)
	if !ok {
		return false, nil, fmt.Errorf("indexing %T, want *model.Pod", raw)
	}
	keys := x.keys(p)
	if len(keys) == 0 {
		return false, nil, nil
	}
	out := make([][]byte, 0, len(keys))
	for _, k := range keys {
		out = append(out, []byte(k+"\x00"))
	}
	return true, out, nil
}

func (x podKeysIndex) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("must provide only a single argument")
	}
	s, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("argument must be a string: %#v", args[0])
	}
	return []byte(s + "\x00"), nil
}

func (x podKeysIndex) PrefixFromArgs(args ...any) ([]byte, error) {
	b, err := x.FromArgs(args...)
	if err != nil {
		return nil, err
	}
	return b[:len(b)-1], nil
}

func hostPortKeys(p *model.Pod) []string {
	var out []string
	for hp := range model.HostPorts(p.Spec) {
		out = append(out, hp.Key())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func uidKeys(p *model.Pod) []string {
	if uid := podUID(p); uid != "" {
		return []string{uid}
	}
	return nil
}

func claimKeys(p *model.Pod) []string {
	out := slices.Sorted(slices.Values(model.ClaimKeys(p.Spec)))
	return slices.Compact(out)
}

// holdsIndexes are the pods table's indexes of what pods hold.
func holdsIndexes() map[string]*memdb.IndexSchema {
	return map[string]*memdb.IndexSchema{
		IndexHostPort: {Name: IndexHostPort, AllowMissing: true, Indexer: podKeysIndex{hostPortKeys}},
		IndexUID:      {Name: IndexUID, AllowMissing: true, Indexer: podKeysIndex{uidKeys}},
		IndexClaim:    {Name: IndexClaim, AllowMissing: true, Indexer: podKeysIndex{claimKeys}},
	}
}

func requestsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableRequests,
		Indexes: map[string]*memdb.IndexSchema{
			IndexID: {Name: IndexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
		},
	}
}

// Counted is what p holds of the node's resources: its spec's requests
// (resourcehelper.PodRequests), none once it ended (it runs nothing) or
// when absent.
func Counted(p *model.Pod) resourcehelper.Requests {
	if p == nil || p.Terminal != "" || p.Spec == nil {
		return resourcehelper.Requests{}
	}
	return resourcehelper.PodRequests(&p.Spec.Spec)
}

// countPod adds to the sum of the pods' requests what writing p over cur
// (either nil when absent) changes; a write of the same spec object that
// neither ends nor revives the pod (a status write) changes nothing.
func (w *writeTxn) countPod(cur, p *model.Pod) {
	if cur != nil && p != nil && cur.Spec == p.Spec && (cur.Terminal == "") == (p.Terminal == "") {
		return
	}
	d := Counted(p)
	if c := Counted(cur); c != (resourcehelper.Requests{}) {
		d = d.Plus(resourcehelper.Requests{CPUMilli: -c.CPUMilli, Memory: -c.Memory})
	}
	if d != (resourcehelper.Requests{}) {
		w.requests = w.requests.Plus(d)
		w.requestsSet = true
	}
}

// commitRequests writes the sum of the pods' requests changed by w.
func (w *writeTxn) commitRequests() error {
	if !w.requestsSet {
		return nil
	}
	row := &requestsRow{ID: requestsID, Requests: requestsIn(w.Txn).Plus(w.requests)}
	if err := w.Insert(TableRequests, row); err != nil {
		return fmt.Errorf("requests insert: %w", err)
	}
	return nil
}

func requestsIn(txn *memdb.Txn) resourcehelper.Requests {
	raw, err := txn.First(TableRequests, IndexID, requestsID)
	if err != nil || raw == nil {
		return resourcehelper.Requests{}
	}
	return raw.(*requestsRow).Requests
}

// PodsByHostPort returns the desired pods binding a host port that hp
// conflicts with (model.HostPort.Conflicts), ordered by key: on every
// address of its port when hp is on every address, else on hp's address
// and on every address.
func (v View) PodsByHostPort(hp model.HostPort) ([]*model.Pod, error) {
	var out []*model.Pod
	add := func(index string, arg string) error {
		pods, err := podsIn(v.txn, nil, index, arg)
		for _, p := range pods {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
		return err
	}
	if hp.IP == model.AnyIP {
		if err := add(IndexHostPort+"_prefix", hp.SlotPrefix()); err != nil {
			return nil, err
		}
	} else {
		for _, k := range []string{hp.Key(), model.HostPort{IP: model.AnyIP, Protocol: hp.Protocol, Port: hp.Port}.Key()} {
			if err := add(IndexHostPort, k); err != nil {
				return nil, err
			}
		}
	}
	slices.SortFunc(out, func(a, b *model.Pod) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// PodsByUID returns the desired pods whose spec has uid, ordered by key.
func (v View) PodsByUID(uid string) ([]*model.Pod, error) {
	return podsIn(v.txn, nil, IndexUID, uid)
}

// PodsByClaim returns the desired pods mounting the claim with key
// ("namespace/name"), ordered by key.
func (v View) PodsByClaim(key string) ([]*model.Pod, error) {
	return podsIn(v.txn, nil, IndexClaim, key)
}

// Requests returns the requests of the desired pods that have not ended
// (Counted, summed).
func (v View) Requests() resourcehelper.Requests { return requestsIn(v.txn) }
