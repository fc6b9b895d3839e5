//go:build !linux

package nodelogs

import "os"

// openBeneath opens rel under dir through os.Root, which refuses "..",
// absolute paths and symlinks that leave dir.
func openBeneath(dir, rel string) (*os.File, error) {
	rel, err := cleanRel(rel)
	if err != nil {
		return nil, err
	}
	return openInRoot(dir, rel)
}
