package config

import (
	"slices"

	"github.com/spf13/viper"
)

// Keys lists every configuration key Load reads, sorted: the keys it gives
// a default (map-valued ones such as node_labels as one key). Each is set
// by the file, by BERTH_ and the key in upper case with "." as "_", or by
// its flag.
func Keys() []string {
	v := viper.New()
	setDefaults(v)
	keys := v.AllKeys()
	slices.Sort(keys)
	return keys
}
