package pause

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Repository is the repository of the pause images berth builds; their
// tags are content digests (Build.Ref).
const Repository = "berth/pause"

// Build is how berth builds its own pause image FROM scratch: the
// executable, either Exe (the native program) or the file Binary (berth
// itself, run as `berth pause`), at Path with Entrypoint. Never mutate
// the Build that Default returns.
type Build struct {
	Exe        []byte
	Binary     string
	Path       string
	Entrypoint []string
	// Digest is the hex sha256 of the executable, which the built image
	// carries as a label.
	Digest string
}

// Ref is the image reference: the repository tagged by the executable's
// digest, so that two berths with different programs never share a tag
// and the same program is built once.
func (b Build) Ref() string { return Repository + ":" + b.Digest[:16] }

// Default is how this berth builds its pause image: the native program
// for its architecture, else its own executable when statically linked.
// The error says why neither is possible (the image must then be pulled).
// It is computed once; the fallback hashes berth's executable then.
var Default = sync.OnceValues(defaultBuild)

func defaultBuild() (Build, error) {
	if exe, ok := Native(); ok {
		return Build{Exe: exe, Path: Path, Entrypoint: []string{Path}, Digest: Digest(exe)}, nil
	}
	self, err := os.Executable()
	if err != nil {
		return Build{}, fmt.Errorf("cannot locate own executable for the pause image: %w", err)
	}
	digest, err := staticDigest(self)
	if err != nil {
		return Build{}, err
	}
	return Build{Binary: self, Path: "/berth", Entrypoint: []string{"/berth", "pause"}, Digest: digest}, nil
}

// errDynamic is why a dynamically linked berth cannot be its own pause.
var errDynamic = errors.New("berth is dynamically linked and cannot build its pause image; build with CGO_ENABLED=0 or set pod_infra_image")

// staticDigest returns the sha256 of the executable at path when it is
// statically linked (it can then run FROM scratch).
func staticDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cannot read own executable for the pause image: %w", err)
	}
	defer f.Close()
	ef, err := elf.NewFile(f)
	if err != nil {
		return "", fmt.Errorf("cannot read own executable for the pause image: %w", err)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			return "", errDynamic
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("cannot read own executable for the pause image: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
