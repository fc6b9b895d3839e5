package imagegc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Statfs is the DiskUsage of the filesystem holding path.
func Statfs(path string) DiskUsage {
	return func(ctx context.Context) (Usage, error) {
		var st unix.Statfs_t
		if err := unix.Statfs(path, &st); err != nil {
			return Usage{}, &os.PathError{Op: "statfs", Path: path, Err: err}
		}
		return Usage{Capacity: int64(st.Blocks) * int64(st.Bsize), Available: int64(st.Bavail) * int64(st.Bsize)}, nil
	}
}

// EngineDir returns where this process sees rootDir, the engine's
// DockerRootDir on the engine's host: through /proc/1/root when it shares
// the host's PID namespace (berth in a container run with --pid=host,
// privileged), else at rootDir itself (on the host, or mounted at the same
// path). A directory counts only when it holds the engine's containers/
// directory; otherwise the error says how to make it visible. The engine
// must be local (a unix socket): a remote engine's paths mean nothing here.
func EngineDir(rootDir string) (string, error) {
	if !filepath.IsAbs(rootDir) {
		return "", fmt.Errorf("engine root dir %q is not absolute", rootDir)
	}
	var errs []error
	for _, dir := range []string{filepath.Join("/proc/1/root", rootDir), rootDir} {
		st, err := os.Stat(filepath.Join(dir, "containers"))
		if err == nil && st.IsDir() {
			return dir, nil
		}
		if err == nil {
			err = fmt.Errorf("%s/containers is not a directory", dir)
		}
		errs = append(errs, err)
	}
	return "", fmt.Errorf("the engine's root dir %s is not visible here (run berth on the engine's host, or with --pid=host, or mount it at the same path): %w",
		rootDir, errors.Join(errs...))
}
