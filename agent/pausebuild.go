package agent

import (
	"log/slog"

	"github.com/berth-dev/berth/config"
	"github.com/berth-dev/berth/pause"
)

// pauseBuild is how the controller builds the default pause image; nil
// with another pod_infra_image, or when berth cannot build one (then the
// image is pulled like any other).
func pauseBuild(cfg *config.Config, log *slog.Logger) *pause.Build {
	if cfg.PodInfraImage != config.DefaultPauseImage() {
		return nil
	}
	b, err := pause.Default()
	if err != nil {
		log.Warn("cannot build the pause image; it will be pulled", "image", cfg.PodInfraImage, "err", err)
		return nil
	}
	return &b
}
