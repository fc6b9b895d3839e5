package store

import (
	"cmp"
	"slices"
)

// sortChanges orders changes by index, removals before writes at one
// index, then by table and key.
func sortChanges(cs []Change) {
	slices.SortStableFunc(cs, func(a, b Change) int {
		if c := cmp.Compare(a.Index, b.Index); c != 0 {
			return c
		}
		if (a.Deleted == nil) != (b.Deleted == nil) {
			if a.Deleted != nil {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(a.Table, b.Table); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
}
