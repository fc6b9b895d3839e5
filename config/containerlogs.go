package config

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/viper"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Bounds of the container log rotation keys.
const (
	// minContainerLogSize keeps a rotated file large enough to hold lines.
	minContainerLogSize = 1 << 10
	// maxContainerLogSize keeps the engine's max-size a number it reads.
	maxContainerLogSize = 1 << 40
	// maxContainerLogFiles bounds what a container's logs may take on disk
	// (max_files x max_size).
	maxContainerLogFiles = 1000
)

// containerLogDefaults are the kubelet's containerLogMaxSize and
// containerLogMaxFiles.
func containerLogDefaults(v *viper.Viper) {
	v.SetDefault("container_log_max_size", "10Mi")
	v.SetDefault("container_log_max_files", 5)
}

// containerLogs reads container_log_max_size (a size, 1Ki..1Ti) and
// container_log_max_files (2..1000, as the kubelet wants at least two: the
// current file and one rotated).
func (p *parser) containerLogs(c *Config) {
	const key = "container_log_max_size"
	raw := strings.TrimSpace(p.v.GetString(key))
	n, err := parseLogSize(raw)
	switch {
	case err != nil:
		p.errs = append(p.errs, fmt.Sprintf("%s: %q is not a size (like 10Mi, 500Ki or the engine's 10m)", key, raw))
	case n < minContainerLogSize:
		p.errs = append(p.errs, fmt.Sprintf("%s: %q is below the minimum 1Ki", key, raw))
	case n > maxContainerLogSize:
		p.errs = append(p.errs, fmt.Sprintf("%s: %q is above the maximum 1Ti", key, raw))
	}
	c.ContainerLogMaxSize = n
	c.ContainerLogMaxFiles = p.integer("container_log_max_files", 2, maxContainerLogFiles)
}

// engineSize is a size as the Docker engine writes it: a number and a
// lower-case k, m or g (binary units, with an optional b).
var engineSize = regexp.MustCompile(`^([0-9]+)([kmg])b?$`)

// parseLogSize reads a size in bytes: a Kubernetes quantity ("10Mi",
// "1.5Mi", "10M" = 10^6, "1048576") or the engine's form ("10m" = 10 MiB,
// which as a quantity would be a hundredth of a byte).
func parseLogSize(s string) (int64, error) {
	if m := engineSize.FindStringSubmatch(s); m != nil {
		n, err := strconv.ParseInt(m[1], 10, 64)
		shift := map[string]uint{"k": 10, "m": 20, "g": 30}[m[2]]
		if err != nil || n > math.MaxInt64>>shift {
			return math.MaxInt64, nil // the digits are digits: only too many
		}
		return n << shift, nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, err
	}
	if q.CmpInt64(math.MaxInt64) > 0 {
		return math.MaxInt64, nil
	}
	return q.Value(), nil // a fraction of a byte rounds up
}
