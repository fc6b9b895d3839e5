package metrics

import (
	"strings"
	"testing"
	"time"
)

// etcdSeriesOf counts the gathered berth_etcd_ series of m.
func etcdSeriesOf(t *testing.T, m *Metrics) int {
	t.Helper()
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "berth_etcd_") {
			n += len(mf.GetMetric())
		}
	}
	return n
}

// The berth_etcd_ series are exported only once etcd is configured
// (RegisterEtcd), and count what was observed before.
func TestEtcdSeriesOnlyWithEtcd(t *testing.T) {
	m := New()
	m.EtcdRequest("range", time.Millisecond, nil)
	m.LeaseRenewed(true)
	if n := etcdSeriesOf(t, m); n != 0 {
		t.Fatalf("%d berth_etcd_ series without etcd, want none", n)
	}
	m.RegisterEtcd()
	if n := etcdSeriesOf(t, m); n != 19 {
		t.Fatalf("%d berth_etcd_ series with etcd, want 19 (8 operations x 2, a counter, 2 lease results)", n)
	}
}
