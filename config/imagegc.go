package config

import (
	"fmt"

	"github.com/spf13/viper"
)

// imageGCDefaults are the kubelet's imageGCHighThresholdPercent and
// imageGCLowThresholdPercent.
func imageGCDefaults(v *viper.Viper) {
	v.SetDefault("image_gc.high_threshold", 85)
	v.SetDefault("image_gc.low_threshold", 80)
}

// imageGC reads image_gc.high_threshold and image_gc.low_threshold,
// percentages (0..100) of the disk holding the engine's images: at or above
// high, unused images are removed until usage is at most low; high 100 turns
// image garbage collection off. low must be below high.
func (p *parser) imageGC(c *Config) {
	n := len(p.errs)
	c.ImageGCHighThreshold = p.integer("image_gc.high_threshold", 0, 100)
	c.ImageGCLowThreshold = p.integer("image_gc.low_threshold", 0, 100)
	if len(p.errs) == n && c.ImageGCLowThreshold >= c.ImageGCHighThreshold {
		p.errs = append(p.errs, fmt.Sprintf("image_gc.low_threshold: %d must be below image_gc.high_threshold %d",
			c.ImageGCLowThreshold, c.ImageGCHighThreshold))
	}
}
