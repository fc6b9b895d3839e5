// Package podfs is the one place berth turns manifest-derived names (pod
// UIDs, volume and container names) into host paths. Every such path is
// root_dir/pods/<uid>/..., made by Root's methods only, each of which
// checks that the names are single path elements and that the result,
// symlinks resolved, is still under root_dir. Callers must never join a
// manifest-derived name onto a path themselves, nor remove a pod path
// other than through RemovePod.
package podfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/berth-dev/berth/model"
)

// Fixed path elements under root_dir.
const (
	podsDir       = "pods"
	volumesDir    = "volumes"
	projectedDir  = "projected"
	containersDir = "containers"
	subpathsDir   = "volume-subpaths"
	termLogFile   = "termination-log"
)

// Root is root_dir, under which each pod has its directory. The zero value
// is unusable; make one with New.
type Root struct {
	dir string
}

// New returns the Root of rootDir, made absolute with the symlinks of its
// existing part resolved, so that its paths compare with the kernel's (mount
// points in /proc/self/mountinfo are resolved paths). It creates nothing.
func New(rootDir string) Root {
	if abs, err := filepath.Abs(rootDir); err == nil {
		rootDir = abs
	}
	rootDir = filepath.Clean(rootDir)
	if real, err := resolveExisting(rootDir); err == nil {
		rootDir = real
	}
	return Root{dir: rootDir}
}

// Dir is root_dir.
func (r Root) Dir() string { return r.dir }

// ErrUnsafe is wrapped by every refusal of a name or path.
var ErrUnsafe = errors.New("unsafe host path")

// element checks that s is exactly one path element.
func element(kind, s string) error {
	switch {
	case s == "", s == ".", s == "..", strings.ContainsAny(s, "/\x00"), s != filepath.Base(s):
		return fmt.Errorf("%w: %s %q is not a single path element", ErrUnsafe, kind, s)
	}
	return nil
}

// checkUID accepts a UUID or a DNS-1123 label.
func checkUID(uid string) error {
	if err := element("pod UID", uid); err != nil {
		return err
	}
	if !model.ValidPodUID(uid) {
		return fmt.Errorf("%w: pod UID %q is neither a UUID nor a DNS-1123 label", ErrUnsafe, uid)
	}
	return nil
}

// checkLabel accepts a DNS-1123 label (volume and container names).
func checkLabel(kind, name string) error {
	if err := element(kind, name); err != nil {
		return err
	}
	if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
		return fmt.Errorf("%w: %s %q: %s", ErrUnsafe, kind, name, strings.Join(msgs, "; "))
	}
	return nil
}

func checkIndex(kind string, n int) error {
	if n < 0 {
		return fmt.Errorf("%w: negative %s %d", ErrUnsafe, kind, n)
	}
	return nil
}

// confine is the one containment check: it joins elems (already checked
// to be single elements) under root_dir/pods and returns the path only
// when it is local to root_dir and, after resolving the symlinks of the
// part that exists, still under root_dir's resolved path.
func (r Root) confine(elems ...string) (string, error) {
	p := filepath.Join(append([]string{r.dir, podsDir}, elems...)...)
	rel, err := filepath.Rel(r.dir, p)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%w: %s is not under %s", ErrUnsafe, p, r.dir)
	}
	realRoot, err := resolveExisting(r.dir)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrUnsafe, r.dir, err)
	}
	realP, err := resolveExisting(p)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrUnsafe, p, err)
	}
	if rel, err := filepath.Rel(realRoot, realP); err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%w: %s resolves to %s, outside %s", ErrUnsafe, p, realP, realRoot)
	}
	return p, nil
}

// resolveExisting resolves the symlinks of the longest existing prefix of
// p (absolute and clean) and appends the rest unchanged. The prefixes that
// lstat does not find are skipped first, one syscall each: symlinks
// resolved, they are missing too.
func resolveExisting(p string) (string, error) {
	var rest []string
	for {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		rest = append(rest, filepath.Base(p))
		p = parent
	}
	slices.Reverse(rest)
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// PodDir is root_dir/pods/<uid>.
func (r Root) PodDir(uid string) (string, error) {
	if err := checkUID(uid); err != nil {
		return "", err
	}
	return r.confine(uid)
}

// VolumeDir is root_dir/pods/<uid>/volumes/<volume>: a disk emptyDir.
func (r Root) VolumeDir(uid, volume string) (string, error) {
	if err := checkUID(uid); err != nil {
		return "", err
	}
	if err := checkLabel("volume name", volume); err != nil {
		return "", err
	}
	return r.confine(uid, volumesDir, volume)
}

// ProjectedDir is root_dir/pods/<uid>/projected/<volume>: a configMap,
// secret, downwardAPI or projected volume, apart from emptyDirs so that a
// volume whose type changes never finds a container's files there.
func (r Root) ProjectedDir(uid, volume string) (string, error) {
	if err := checkUID(uid); err != nil {
		return "", err
	}
	if err := checkLabel("volume name", volume); err != nil {
		return "", err
	}
	return r.confine(uid, projectedDir, volume)
}

// PodsDirMode is root_dir/pods' mode, as the kubelet's pods directory: the
// pods' Secrets and data are below it, and no other host user may reach
// them (containers reach their volumes through their own mounts).
const PodsDirMode = 0o750

// Prepare makes root_dir/pods with PodsDirMode, and gives an existing one
// that mode.
func (r Root) Prepare() error {
	dir := filepath.Join(r.dir, podsDir)
	if err := os.MkdirAll(dir, PodsDirMode); err != nil {
		return err
	}
	return os.Chmod(dir, PodsDirMode)
}

// ContainerDir is root_dir/pods/<uid>/containers/<container>/<attempt>:
// files berth binds into one instance of a container.
func (r Root) ContainerDir(uid, container string, attempt int) (string, error) {
	if err := checkContainerDir(uid, container, attempt); err != nil {
		return "", err
	}
	return r.confine(uid, containersDir, container, strconv.Itoa(attempt))
}

// checkContainerDir checks the names of a ContainerDir.
func checkContainerDir(uid, container string, attempt int) error {
	if err := checkUID(uid); err != nil {
		return err
	}
	if err := checkLabel("container name", container); err != nil {
		return err
	}
	return checkIndex("attempt", attempt)
}

// TerminationLog is the instance's termination-log file in its
// ContainerDir.
func (r Root) TerminationLog(uid, container string, attempt int) (string, error) {
	if err := checkContainerDir(uid, container, attempt); err != nil {
		return "", err
	}
	return r.confine(uid, containersDir, container, strconv.Itoa(attempt), termLogFile)
}

// SubpathDir is root_dir/pods/<uid>/volume-subpaths/<volume>/<container>/<index>:
// where the subPath of the container's index-th volumeMount is bound.
func (r Root) SubpathDir(uid, volume, container string, index int) (string, error) {
	if err := checkUID(uid); err != nil {
		return "", err
	}
	if err := checkLabel("volume name", volume); err != nil {
		return "", err
	}
	if err := checkLabel("container name", container); err != nil {
		return "", err
	}
	if err := checkIndex("volumeMount index", index); err != nil {
		return "", err
	}
	return r.confine(uid, subpathsDir, volume, container, strconv.Itoa(index))
}
