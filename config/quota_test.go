package config

import (
	"strings"
	"testing"
)

func TestQuotaDefaultsAndOverrides(t *testing.T) {
	c, err := Load(flags(t, "--node-name", "n1"))
	if err != nil {
		t.Fatal(err)
	}
	want := SourceQuota{Pods: 110, Objects: 1000, Bytes: 64 << 20}
	for _, src := range []string{"http", "etcd", "push"} {
		if c.Quotas[src] != want {
			t.Errorf("%s quota %+v, want %+v", src, c.Quotas[src], want)
		}
	}
	if c.Quotas["file"] != (SourceQuota{}) {
		t.Errorf("file quota %+v, want none", c.Quotas["file"])
	}
	t.Setenv("BERTH_SOURCES_PUSH_QUOTA_OBJECTS", "2")
	t.Setenv("BERTH_SOURCES_PUSH_QUOTA_BYTES", "100M")
	t.Setenv("BERTH_SOURCES_ETCD_QUOTA_PODS", "0")
	c, err = Load(flags(t, "--node-name", "n1"))
	if err != nil {
		t.Fatal(err)
	}
	if q := c.Quotas["push"]; q != (SourceQuota{Pods: 110, Objects: 2, Bytes: 100_000_000}) {
		t.Errorf("push quota %+v", q)
	}
	if q := c.Quotas["etcd"]; q.Pods != 0 {
		t.Errorf("etcd quota %+v, want pods off", q)
	}
}

func TestQuotaBadValuesNameTheKey(t *testing.T) {
	for env, want := range map[string]string{
		"BERTH_SOURCES_PUSH_QUOTA_PODS=-1":      "sources.push.quota.pods: -1 is outside",
		"BERTH_SOURCES_HTTP_QUOTA_OBJECTS=many": `sources.http.quota.objects: "many" is not an integer`,
		"BERTH_SOURCES_ETCD_QUOTA_BYTES=lots":   `sources.etcd.quota.bytes: "lots" is not a quantity`,
		"BERTH_SOURCES_PUSH_QUOTA_BYTES=-1Mi":   `sources.push.quota.bytes: "-1Mi" is not a whole, non-negative number`,
		"BERTH_SOURCES_PUSH_QUOTA_BYTES=0.5":    `sources.push.quota.bytes: "0.5" is not a whole`,
	} {
		t.Run(env, func(t *testing.T) {
			k, v, _ := strings.Cut(env, "=")
			t.Setenv(k, v)
			_, err := Load(flags(t, "--node-name", "n1"))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want %q", err, want)
			}
		})
	}
}
