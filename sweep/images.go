package sweep

import (
	"context"
	"errors"

	"github.com/distribution/reference"

	"github.com/berth-dev/berth/runtime"
)

// images removes berth's old pause images: images berth built
// (runtime.LabelBuiltImage) whose tags are all in PauseRepository, or that
// have no tag left, when they are not the configured pause image and no
// container uses them.
func (s *sweeper) images(ctx context.Context, images []runtime.Image) {
	current := familiar(s.cfg.PauseImage)
	var currentID string
	switch info, err := s.engine.InspectImage(ctx, s.cfg.PauseImage); {
	case err == nil:
		currentID = info.ID
	case !errors.Is(err, runtime.ErrImageNotFound):
		s.fail(err) // the current one is unknown: keep every image
		return
	}
	for _, im := range images {
		if im.Labels[runtime.LabelBuiltImage] != "true" || im.ID == currentID || s.imageUsed[im.ID] ||
			!im.Created.Before(s.cfg.Before) || !s.oldPause(im.RepoTags, current) {
			continue
		}
		switch err := s.engine.RemoveImage(ctx, im.ID); {
		case errors.Is(err, runtime.ErrImageInUse):
			s.cfg.Log.Info("startup sweep: an old pause image is in use; kept", "image", im.ID, "err", err)
		case err != nil:
			s.fail(err)
		default:
			s.removed(KindImage, im.ID, "tags", im.RepoTags)
		}
	}
}

// oldPause reports whether tags are those of an old pause image: none
// (dangling), or every one in PauseRepository and none the current ref.
func (s *sweeper) oldPause(tags []string, current string) bool {
	for _, t := range tags {
		named, err := reference.ParseNormalizedNamed(t)
		if err != nil || reference.FamiliarName(named) != familiarName(s.cfg.PauseRepository) || familiar(t) == current {
			return false
		}
	}
	return true
}

// familiar is ref in the engine's short form with its tag (":latest" when
// none), or ref itself when it does not parse.
func familiar(ref string) string {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return ref
	}
	return reference.FamiliarString(reference.TagNameOnly(named))
}

// familiarName is repository repo in the engine's short form.
func familiarName(repo string) string {
	named, err := reference.ParseNormalizedNamed(repo)
	if err != nil {
		return repo
	}
	return reference.FamiliarName(named)
}
