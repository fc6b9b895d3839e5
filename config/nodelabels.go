package config

import (
	"fmt"
	goruntime "runtime"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// nodeLabels reads node_labels: a map (config file) or a comma-separated
// k=v list (BERTH_NODE_LABELS), each key a label name and each value a label
// value. kubernetes.io/hostname (node_name), kubernetes.io/os and
// kubernetes.io/arch are always set; node_labels may repeat them with the
// same value only. Viper folds the map's keys to lower case.
func (p *parser) nodeLabels(node string) map[string]string {
	const key = "node_labels"
	raw := map[string]string{}
	switch v := p.v.Get(key).(type) {
	case nil:
	case string:
		for _, kv := range strings.Split(v, ",") {
			if kv = strings.TrimSpace(kv); kv == "" {
				continue
			}
			k, val, ok := strings.Cut(kv, "=")
			if !ok {
				p.errs = append(p.errs, fmt.Sprintf("%s: %q is not key=value", key, kv))
				continue
			}
			raw[strings.TrimSpace(k)] = strings.TrimSpace(val)
		}
	case map[string]any:
		for k, val := range v {
			switch val.(type) {
			case string, bool, int, int64:
				raw[k] = fmt.Sprint(val)
			default:
				p.errs = append(p.errs, fmt.Sprintf("%s.%s: %v is not a label value (a string)", key, k, val))
			}
		}
	case map[string]string:
		for k, val := range v {
			raw[k] = val
		}
	default:
		p.errs = append(p.errs, fmt.Sprintf("%s: must be a map of label names to values, or k=v,k=v", key))
	}
	fixed := map[string]string{v1.LabelHostname: node, v1.LabelOSStable: goruntime.GOOS, v1.LabelArchStable: goruntime.GOARCH}
	labels := map[string]string{}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		val := raw[k]
		for _, msg := range validation.IsQualifiedName(k) {
			p.errs = append(p.errs, fmt.Sprintf("%s: key %q: %s", key, k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(val) {
			p.errs = append(p.errs, fmt.Sprintf("%s.%s: %q: %s", key, k, val, msg))
		}
		if want, ok := fixed[k]; ok && val != want {
			p.errs = append(p.errs, fmt.Sprintf("%s.%s: %q cannot be set: berth always sets it to %q", key, k, val, want))
		}
		labels[k] = val
	}
	for k, v := range fixed {
		labels[k] = v
	}
	return labels
}
