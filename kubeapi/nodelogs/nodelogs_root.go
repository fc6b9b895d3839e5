package nodelogs

import "os"

// openInRoot opens rel (cleaned) under dir through os.Root, which refuses
// paths and symlinks that leave dir.
func openInRoot(dir, rel string) (*os.File, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.Open(rel)
}
