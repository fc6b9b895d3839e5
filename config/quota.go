package config

import (
	"fmt"
	"math"

	"github.com/spf13/viper"
	"k8s.io/apimachinery/pkg/api/resource"
)

// SourceQuota bounds what one network source may declare: its pods, its
// objects (ConfigMaps, Secrets, claims) and the bytes of its manifests;
// zero is no limit.
type SourceQuota struct {
	Pods, Objects, Bytes int64
}

// Default quota of each network source (sources.<name>.quota.*): the
// kubelet's default max-pods; ten objects per pod at that count; 64 MiB of
// manifests, 64 objects at the apiserver's 1 MiB limit of one.
const (
	DefaultQuotaPods    = 110
	DefaultQuotaObjects = 1000
	DefaultQuotaBytes   = "64Mi"
)

func quotaDefaults(v *viper.Viper) {
	for _, src := range networkSources {
		v.SetDefault("sources."+src+".quota.pods", DefaultQuotaPods)
		v.SetDefault("sources."+src+".quota.objects", DefaultQuotaObjects)
		v.SetDefault("sources."+src+".quota.bytes", DefaultQuotaBytes)
	}
}

// quotas reads sources.<name>.quota.pods, .objects (counts) and .bytes (a
// quantity: 67108864, 64Mi, 100M) of each network source; 0 turns a limit
// off.
func (p *parser) quotas(c *Config) {
	c.Quotas = map[string]SourceQuota{}
	for _, src := range networkSources {
		key := "sources." + src + ".quota."
		c.Quotas[src] = SourceQuota{
			Pods:    int64(p.integer(key+"pods", 0, math.MaxInt32)),
			Objects: int64(p.integer(key+"objects", 0, math.MaxInt32)),
			Bytes:   p.bytes(key + "bytes"),
		}
	}
}

// bytes reads a non-negative quantity of bytes.
func (p *parser) bytes(key string) int64 {
	raw := p.v.GetString(key)
	q, err := resource.ParseQuantity(raw)
	if err != nil {
		p.errs = append(p.errs, fmt.Sprintf("%s: %q is not a quantity of bytes (like 64Mi or 67108864)", key, raw))
		return 0
	}
	n, ok := q.AsInt64()
	if !ok || n < 0 {
		p.errs = append(p.errs, fmt.Sprintf("%s: %q is not a whole, non-negative number of bytes", key, raw))
		return 0
	}
	return n
}
