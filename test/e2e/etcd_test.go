package e2e

import (
	"testing"

	"github.com/berth-dev/berth/internal/testutil"
)

// startEtcd starts a real etcd for one test (Debian's etcd-server).
func startEtcd(tb testing.TB) *testutil.Etcd { return testutil.StartEtcd(tb) }
