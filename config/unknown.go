package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/viper"

	"github.com/berth-dev/berth/internal/editdist"
)

// mapKeys are keys whose value is a map of the user's own keys.
var mapKeys = []string{"node_labels", "sources.http.headers"}

// unknownKeys returns one warning for each key of the config file at path
// that berth does not read, naming the nearest known key when one is
// close: `unknown config key "serverr" in /etc/berth/config.yaml (did you
// mean "server"?)`. A key under an unknown section is reported as the
// section. A file that cannot be read again gives no warning (Load reports
// its error).
func unknownKeys(path string) []string {
	f := viper.New()
	f.SetConfigFile(path)
	if err := f.ReadInConfig(); err != nil {
		return nil
	}
	known := map[string]bool{}
	for _, k := range Keys() {
		parts := strings.Split(k, ".")
		for i := range parts {
			known[strings.Join(parts[:i+1], ".")] = true
		}
	}
	var warns []string
	seen := map[string]bool{}
	for _, k := range f.AllKeys() {
		bad := firstUnknown(k, known)
		if bad == "" || seen[bad] {
			continue
		}
		seen[bad] = true
		w := fmt.Sprintf("unknown config key %q in %s", bad, path)
		if s := nearest(bad, known); s != "" {
			w += fmt.Sprintf(" (did you mean %q?)", s)
		}
		warns = append(warns, w)
	}
	slices.Sort(warns)
	return warns
}

// firstUnknown returns the shortest prefix of key that is not a known key
// or section, "" when key is known or lies inside a map-valued key.
func firstUnknown(key string, known map[string]bool) string {
	parts := strings.Split(key, ".")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], ".")
		if slices.Contains(mapKeys, prefix) {
			return ""
		}
		if !known[prefix] {
			return prefix
		}
	}
	return ""
}

// nearest returns the known key or section of the same depth and parent
// as bad that is fewest edits away, "" when none is close enough to be a
// typo.
func nearest(bad string, known map[string]bool) string {
	parent, name := "", bad
	if i := strings.LastIndex(bad, "."); i >= 0 {
		parent, name = bad[:i+1], bad[i+1:]
	}
	best, bestDist := "", max(2, len(name)/3)+1
	for k := range known {
		rest, ok := strings.CutPrefix(k, parent)
		if !ok || strings.Contains(rest, ".") {
			continue
		}
		if d := editdist.Distance(name, rest); d < bestDist || d == bestDist && k < best {
			best, bestDist = k, d
		}
	}
	return best
}
