//go:build unix

package podfs

import "syscall"

// Capacity is the size in bytes of root_dir's filesystem: the node's
// ephemeral storage.
func (r Root) Capacity() (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(r.dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Blocks) * int64(st.Bsize), nil
}
