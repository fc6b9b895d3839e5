package podfs

import "os"

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
}
