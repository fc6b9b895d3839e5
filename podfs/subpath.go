package podfs

import (
	"fmt"
	"os"
	"path"
	"strings"
)

// LocalSubPath returns sub cleaned when it is a relative path inside its
// volume: not absolute, not leaving by "..", no NUL. BindSubPath applies
// it; callers handing a subPath to the engine themselves must too.
func LocalSubPath(sub string) (string, error) {
	clean := path.Clean(sub)
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || strings.ContainsRune(clean, 0) {
		return "", fmt.Errorf("subPath %q: must be a relative path inside the volume", sub)
	}
	return clean, nil
}

// SubPath is one volumeMount's subPath to bind (BindSubPath).
type SubPath struct {
	UID, Volume, Container string
	// Index is the volumeMount's index in the container's volumeMounts.
	Index int
	// VolumePath is the volume's directory on the host: an emptyDir's
	// VolumeDir or a hostPath's path.
	VolumePath string
	// Path is the subPath, relative to VolumePath.
	Path string
	// Mode is given to the directories made on the way (umask aside);
	// Own, when set, is called on each of them, open.
	Mode os.FileMode
	Own  func(dir *os.File) error
	// NoCreate refuses a missing element instead of making it (the
	// read-only projected volumes).
	NoCreate bool
}
