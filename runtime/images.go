package runtime

import (
	"errors"
	"time"
)

// LabelBuiltImage marks the images berth built itself (io.berth.image=true):
// its pause images, the only images berth's startup sweep may remove by
// label.
const LabelBuiltImage = labelImage

// ErrImageInUse is wrapped by RemoveImage when the engine refuses because a
// container (running or not) or a child image uses the image.
var ErrImageInUse = errors.New("image is in use")

// Image is a local top-level image as the engine lists it.
type Image struct {
	// ID is the engine's image ID ("sha256:...").
	ID string
	// RepoTags are its "repo:tag" references, in the engine's familiar form
	// ("berth/pause:1"); empty for a dangling image.
	RepoTags []string
	// RepoDigests are its "repo@sha256:..." references.
	RepoDigests []string
	Created     time.Time
	// Size is the image's size with every layer, shared ones included (the
	// size the kubelet counts).
	Size   int64
	Labels map[string]string
}
