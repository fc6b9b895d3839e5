package agent

import (
	"debug/elf"
	"log/slog"
	"os"

	"github.com/berth-dev/berth/config"
)

// pauseBinary is the executable the controller builds the default pause
// image from: berth itself, run as `berth pause`; "" with another
// pod_infra_image, or when berth cannot serve (see staticSelf).
func pauseBinary(cfg *config.Config, log *slog.Logger) string {
	if cfg.PodInfraImage != config.DefaultPauseImage() {
		return ""
	}
	return staticSelf(log)
}

// staticSelf returns berth's own executable when it is statically linked,
// so it can serve as the pause image; "" otherwise.
func staticSelf(log *slog.Logger) string {
	exe, err := os.Executable()
	if err != nil {
		log.Warn("cannot locate own executable for the pause image", "err", err)
		return ""
	}
	f, err := elf.Open(exe)
	if err != nil {
		log.Warn("cannot read own executable for the pause image", "err", err)
		return ""
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			log.Warn("berth is dynamically linked and cannot build its pause image; build with CGO_ENABLED=0 or set pod_infra_image", "exe", exe)
			return ""
		}
	}
	return exe
}
