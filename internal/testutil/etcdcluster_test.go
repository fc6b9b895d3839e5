package testutil

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

func TestEtcdClusterSurvivesLeaderLoss(t *testing.T) {
	c := StartEtcdCluster(t, 3)
	if got := len(c.Endpoints()); got != 3 {
		t.Fatalf("Endpoints: %d, want 3", got)
	}
	cli := c.Client()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := cli.Put(ctx, "k", "before"); err != nil {
		t.Fatal(err)
	}
	leader := waitLeader(t, c, -1)
	c.StopMember(leader)
	start := time.Now()
	WaitFor(t, 15*time.Second, "a put through the two remaining members", func() bool {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		defer pcancel()
		_, err := cli.Put(pctx, "k", "after")
		return err == nil
	})
	t.Logf("put succeeded %s after killing leader m%d", time.Since(start).Round(time.Millisecond), leader)
	if l := waitLeader(t, c, leader); l == leader {
		t.Fatalf("killed member m%d still the leader", leader)
	}

	c.StartMember(leader)
	one, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints()[leader : leader+1], DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	resp, err := one.Get(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "after" {
		t.Fatalf("restarted member has k = %v, want after", resp.Kvs)
	}
}

// waitLeader waits (up to 15 s) for a leader other than not, and returns it.
func waitLeader(t *testing.T, c *EtcdCluster, not int) int {
	t.Helper()
	leader := -1
	var err error
	WaitFor(t, 15*time.Second, "a leader", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		leader, err = c.Leader(ctx)
		return err == nil && leader != not
	})
	return leader
}

func TestEtcdTLSAuth(t *testing.T) {
	ca := NewTestCA(t, t.TempDir())
	e := StartEtcdTLS(t, ca)
	EnableAuth(t, e.TLSClient(ca, "", ""), "berth", "s3cret")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	cli := e.TLSClient(ca, "berth", "s3cret")
	if _, err := cli.Put(ctx, "/berth/k", "v"); err != nil {
		t.Fatalf("put as berth: %v", err)
	}
	if _, err := cli.Put(ctx, "elsewhere", "v"); err != nil {
		t.Fatalf("put as berth outside /berth: %v", err)
	}
	resp, err := cli.Get(ctx, "", clientv3.WithPrefix())
	if err != nil {
		t.Fatalf("get of the whole keyspace as berth: %v", err)
	}
	if len(resp.Kvs) != 2 {
		t.Fatalf("whole keyspace holds %d keys, want 2", len(resp.Kvs))
	}

	noCert, err := newTLSClient([]string{e.ClientURL}, ca, false, "", "")
	if err == nil {
		defer noCert.Close()
		pctx, pcancel := context.WithTimeout(ctx, 3*time.Second)
		defer pcancel()
		_, err = noCert.Put(pctx, "/berth/k", "nocert")
	}
	if err == nil {
		t.Fatal("put without a client certificate succeeded")
	}
	t.Logf("without a client certificate: %v", err)

	wrong, err := newTLSClient([]string{e.ClientURL}, ca, true, "berth", "wrong")
	if err == nil {
		defer wrong.Close()
		pctx, pcancel := context.WithTimeout(ctx, 3*time.Second)
		defer pcancel()
		_, err = wrong.Put(pctx, "/berth/k", "wrong")
	}
	if err == nil {
		t.Fatal("put with a wrong password succeeded")
	}
	t.Logf("with a wrong password: %v", err)

	if _, err := http.Get(e.ClientURL + "/health"); err == nil {
		t.Fatal("plain https /health without the CA succeeded")
	}
}

func TestEtcdWipeStartOn(t *testing.T) {
	e := StartEtcd(t)
	e.Put("/berth/old", "v")
	e.Wipe()
	side := fmt.Sprintf("http://127.0.0.1:%d", FreePort(t))
	e.StartOn(side)
	if _, err := (&http.Client{Timeout: time.Second}).Get(e.ClientURL + "/health"); err == nil {
		t.Fatal("e.ClientURL is served while etcd runs on the side URL")
	}
	sideCli, err := clientv3.New(clientv3.Config{Endpoints: []string{side}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer sideCli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := sideCli.Get(ctx, "/berth/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 0 {
		t.Fatalf("after Wipe %d keys remain", resp.Count)
	}
	if _, err := sideCli.Put(ctx, "/berth/restored", "v"); err != nil {
		t.Fatal(err)
	}
	e.Stop()
	e.Start()
	if n := e.Count("/berth/"); n != 1 {
		t.Fatalf("on ClientURL after restore: %d keys, want 1", n)
	}
}
