package fake

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/berth-dev/berth/runtime"
)

func (f *builderFake) BuildImage(ctx context.Context, tag, binary, path string, entrypoint []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("BuildImage")
	d, err := runtime.FileDigest(binary)
	if err != nil {
		return fmt.Errorf("build image %s: %w", tag, err)
	}
	size := int64(0)
	if st, err := os.Stat(binary); err == nil {
		size = st.Size()
	}
	f.builtLocked(tag, d, size, path, entrypoint)
	return nil
}

func (f *builderFake) BuildImageData(ctx context.Context, tag string, exe []byte, path string, entrypoint []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("BuildImageData")
	sum := sha256.Sum256(exe)
	f.builtLocked(tag, hex.EncodeToString(sum[:]), int64(len(exe)), path, entrypoint)
	return nil
}

// builtLocked records a build of tag holding one executable file: content
// the engine has keeps its image ID (the builder's cache), other content
// gets a new one.
func (f *builderFake) builtLocked(tag, digest string, size int64, path string, entrypoint []string) {
	content := runtime.ImageContent{
		Config: runtime.ImageConfig{Entrypoint: slices.Clone(entrypoint), Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}},
		Layers: []runtime.Layer{{Entries: []runtime.LayerEntry{{Name: strings.TrimPrefix(path, "/"), Type: tar.TypeReg, Mode: 0o755, Size: size, Digest: digest}}}},
	}
	id := ""
	for have, c := range f.content {
		if reflect.DeepEqual(c, withID(content, have)) {
			id = have
		}
	}
	switch {
	case id != "":
	case !f.images[tag]:
		id = fakeImageID(tag)
	default:
		id = fakeImageID(tag + "@" + digest + fmt.Sprint(entrypoint))
	}
	f.replaceLocked(tag, id)
	f.content[id] = withID(content, id)
	f.imageLabels[tag] = map[string]string{runtime.LabelImageBinary: digest}
}

func withID(c runtime.ImageContent, id string) runtime.ImageContent {
	c.ID = id
	return c
}
