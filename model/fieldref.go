package model

import "strings"

// MetadataFieldRef splits a downward-API fieldPath "metadata.labels['k']" or
// "metadata.annotations['k']" into its map ("labels" or "annotations") and
// key; ok is false for any other path, and for an empty key.
func MetadataFieldRef(path string) (m, key string, ok bool) {
	for _, m := range []string{"labels", "annotations"} {
		rest, found := strings.CutPrefix(path, "metadata."+m+"['")
		if !found {
			continue
		}
		if key, found := strings.CutSuffix(rest, "']"); found && key != "" {
			return m, key, true
		}
		return "", "", false
	}
	return "", "", false
}
