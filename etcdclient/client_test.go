package etcdclient

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
)

type ops struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *ops) EtcdRequest(op string, _ time.Duration, _ error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n[op]++
}

// TestTLSAndAuth: a client of Config reaches an etcd that wants a client
// certificate and a password, and reports its requests by operation; a
// wrong password and a missing CA fail.
func TestTLSAndAuth(t *testing.T) {
	ca := testutil.NewTestCA(t, t.TempDir())
	e := testutil.StartEtcdTLS(t, ca)
	testutil.EnableAuth(t, e.TLSClient(ca, "", ""), "berth", "s3cret")
	obs := &ops{n: map[string]int{}}
	cfg := Config{Endpoints: []string{e.ClientURL}, CAFile: ca.CAFile, CertFile: ca.ClientCert, KeyFile: ca.ClientKey,
		Username: "berth", Password: "s3cret", DialTimeout: 3 * time.Second, Observer: obs}
	if err := cfg.Validate(configKey); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cli, err := cfg.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Put(ctx, "/k", "v"); err != nil {
		t.Fatalf("put: %v", err)
	}
	if resp, err := cli.Get(ctx, "/k"); err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("get: %v %v", resp, err)
	}
	obs.mu.Lock()
	if obs.n["put"] != 1 || obs.n["range"] < 1 || obs.n["authenticate"] < 1 {
		t.Errorf("observed operations %v, want put 1, range and authenticate", obs.n)
	}
	obs.mu.Unlock()

	wrong := cfg
	wrong.Password, wrong.Observer = "nope", nil
	if c, err := wrong.New(ctx); err == nil {
		_, err = c.Put(ctx, "/k", "x")
		c.Close()
		if err == nil {
			t.Fatal("a wrong password was accepted")
		}
	} else if !strings.Contains(err.Error(), "authentication failed") {
		t.Errorf("wrong password: %v", err)
	}
	noCA := cfg
	noCA.CAFile, noCA.Observer = "", nil
	if c, err := noCA.New(ctx); err == nil {
		sctx, scancel := context.WithTimeout(ctx, 3*time.Second)
		_, err = c.Put(sctx, "/k", "x")
		scancel()
		c.Close()
		if err == nil {
			t.Fatal("etcd's certificate was trusted without its CA")
		}
	}
}

func configKey(field string) string { return "sources.etcd." + field }

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Endpoints: []string{"http://a:2379"}}, ""},
		{Config{Endpoints: []string{"https://a:2379"}, CAFile: "ca"}, ""},
		{Config{CertFile: "c"}, "sources.etcd.tls.cert_file and sources.etcd.tls.key_file must be set together"},
		{Config{Password: "p"}, "sources.etcd.password is set without sources.etcd.username"},
		{Config{Endpoints: []string{"http://a:2379"}, CAFile: "ca"}, "plain http but TLS is configured"},
		{Config{Endpoints: []string{"http://a:2379"}, Username: "u", Password: "p"},
			"sources.etcd.username: the etcd password would cross plain http (http://a:2379); use https:// and sources.etcd.tls.ca_file, or accept the risk with sources.etcd.allow_insecure_auth"},
		{Config{Endpoints: []string{"http://a:2379"}, Username: "u", Password: "p", AllowInsecureAuth: true}, ""},
		{Config{Endpoints: []string{"https://a:2379"}, CAFile: "ca", Username: "u", Password: "p"}, ""},
	} {
		err := tc.cfg.Validate(configKey)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	if Operation("/etcdserverpb.KV/Range") != "range" || Operation("/etcdserverpb.Lease/LeaseKeepAlive") != "leasekeepalive" {
		t.Error("Operation")
	}
}
