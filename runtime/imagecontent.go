package runtime

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"

	cerrdefs "github.com/containerd/errdefs"
)

// ImageContent is what a local image holds, read from the engine's export
// of it and bound to its ID: ID is the digest of the config read, whose
// layer digests are those of the layers read. A label says nothing of an
// image; its content does.
type ImageContent struct {
	ID     string
	Config ImageConfig
	Layers []Layer
}

// ImageConfig is the part of an image's config that decides what its
// containers run.
type ImageConfig struct {
	Entrypoint []string
	Cmd        []string
	Env        []string
	User       string
	WorkingDir string
	StopSignal string
	// Volumes are the image's anonymous volume paths, sorted.
	Volumes []string
	// Healthcheck is the health check's test (nil: none).
	Healthcheck []string
	OnBuild     []string
}

// Layer is one layer's tar entries, in order.
type Layer struct {
	Entries []LayerEntry
}

// LayerEntry is one entry of a layer.
type LayerEntry struct {
	// Name is the entry's path in the image, cleaned and without a
	// leading "/" ("pause", "etc/passwd").
	Name string
	Type byte // a tar type flag: tar.TypeReg, tar.TypeDir, ...
	// Mode is the permission bits with setuid, setgid and sticky.
	Mode     int64
	Size     int64
	Linkname string
	// Digest is the hex sha256 of a regular file's bytes.
	Digest string
}

// ErrImageTooLarge is wrapped by ImageContent when the image or its export
// is over the limit asked.
var ErrImageTooLarge = errors.New("image larger than the limit")

// ImageContent exports img (a reference or an ID) and returns what it
// holds. An image whose layers hold more than limit bytes is refused
// before its export is read, an export longer than limit plus a little
// metadata as it is read, both as ErrImageTooLarge; an absent image is
// ErrImageNotFound.
func (d *dockerImages) ImageContent(ctx context.Context, img string, limit int64) (ImageContent, error) {
	info, err := d.cli.ImageInspect(ctx, img)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return ImageContent{}, fmt.Errorf("image %s: %w", img, ErrImageNotFound)
		}
		return ImageContent{}, fmt.Errorf("inspect image %s: %w", img, err)
	}
	if info.Size > limit {
		return ImageContent{}, fmt.Errorf("image %s: %d bytes: %w of %d", img, info.Size, ErrImageTooLarge, limit)
	}
	// By ID: the tag may move while the export runs.
	rc, err := d.cli.ImageSave(ctx, []string{info.ID})
	if err != nil {
		return ImageContent{}, fmt.Errorf("export image %s: %w", img, err)
	}
	defer rc.Close()
	content, err := ReadImageExport(rc, info.ID, limit+exportMetadata)
	if err != nil {
		return ImageContent{}, fmt.Errorf("export image %s: %w", img, err)
	}
	return content, nil
}

// exportMetadata is what an export may hold beyond its layers' bytes: tar
// headers and padding, the config, the manifest and the legacy layer
// descriptions.
const exportMetadata = 1 << 20

// maxMetadataFile bounds the files of an export read whole (the manifest
// and the config; a layer this small is read whole too).
const maxMetadataFile = 1 << 20

// ReadImageExport reads an image export (`docker save` of one image, in
// the legacy or the OCI layout, layers plain or gzipped) of image id,
// reading at most max bytes, and returns what the image holds. It fails
// unless the export holds one image whose config digest is id and whose
// layers match the config's digests.
func ReadImageExport(r io.Reader, id string, max int64) (ImageContent, error) {
	lr := &capReader{r: r, left: max}
	tr := tar.NewReader(lr)
	files := map[string]*exportFile{}
	links := map[string]string{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return ImageContent{}, lr.explain(err)
		}
		name := path.Clean(hdr.Name)
		switch hdr.Typeflag {
		case tar.TypeReg:
			f, err := readExportFile(tr, hdr.Size)
			if err != nil {
				return ImageContent{}, lr.explain(fmt.Errorf("%s: %w", name, err))
			}
			files[name] = f
		case tar.TypeSymlink:
			// The legacy layout links a layer shared with an earlier one.
			links[name] = path.Join(path.Dir(name), hdr.Linkname)
		}
	}
	file := func(name string) (*exportFile, error) {
		name = path.Clean(name)
		for hops := 0; hops < 8; hops++ {
			if f, ok := files[name]; ok {
				return f, nil
			}
			target, ok := links[name]
			if !ok {
				break
			}
			name = target
		}
		return nil, fmt.Errorf("the export has no file %s", name)
	}
	return imageFromExport(file, id)
}

// imageFromExport checks the export's manifest, config and layers against
// id and returns the image's content.
func imageFromExport(file func(string) (*exportFile, error), id string) (ImageContent, error) {
	mf, err := file("manifest.json")
	if err != nil || mf.raw == nil {
		return ImageContent{}, errors.New("the export has no manifest.json")
	}
	var manifest []struct {
		Config string
		Layers []string
	}
	if err := json.Unmarshal(mf.raw, &manifest); err != nil {
		return ImageContent{}, fmt.Errorf("manifest.json: %w", err)
	}
	if len(manifest) != 1 {
		return ImageContent{}, fmt.Errorf("manifest.json lists %d images, want 1", len(manifest))
	}
	cf, err := file(manifest[0].Config)
	if err != nil {
		return ImageContent{}, err
	}
	if cf.raw == nil || "sha256:"+cf.digest != id {
		return ImageContent{}, fmt.Errorf("the exported config is not that of image %s", id)
	}
	var cfg struct {
		Config struct {
			Entrypoint, Cmd, Env, OnBuild []string
			User, WorkingDir, StopSignal  string
			Volumes                       map[string]struct{}
			Healthcheck                   *struct{ Test []string }
		} `json:"config"`
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(cf.raw, &cfg); err != nil {
		return ImageContent{}, fmt.Errorf("image config: %w", err)
	}
	c := cfg.Config
	content := ImageContent{ID: id, Config: ImageConfig{Entrypoint: c.Entrypoint, Cmd: c.Cmd, Env: c.Env, OnBuild: c.OnBuild,
		User: c.User, WorkingDir: c.WorkingDir, StopSignal: c.StopSignal}}
	for v := range c.Volumes {
		content.Config.Volumes = append(content.Config.Volumes, v)
	}
	sort.Strings(content.Config.Volumes)
	if c.Healthcheck != nil {
		content.Config.Healthcheck = c.Healthcheck.Test
	}
	if len(manifest[0].Layers) != len(cfg.RootFS.DiffIDs) {
		return ImageContent{}, fmt.Errorf("the export has %d layers, the config %d", len(manifest[0].Layers), len(cfg.RootFS.DiffIDs))
	}
	for i, name := range manifest[0].Layers {
		lf, err := file(name)
		if err != nil {
			return ImageContent{}, err
		}
		if lf.layerErr != nil {
			return ImageContent{}, fmt.Errorf("layer %s: %w", name, lf.layerErr)
		}
		if "sha256:"+lf.layer.diffID != cfg.RootFS.DiffIDs[i] {
			return ImageContent{}, fmt.Errorf("layer %s is not the config's layer %d", name, i)
		}
		content.Layers = append(content.Layers, Layer{Entries: lf.layer.entries})
	}
	return content, nil
}

// exportFile is one regular file of an export: its digest, its bytes when
// small, and what it holds read as a layer.
type exportFile struct {
	digest   string
	raw      []byte
	layer    exportLayer
	layerErr error
}

type exportLayer struct {
	diffID  string // hex sha256 of the uncompressed tar
	entries []LayerEntry
}

// readExportFile reads size bytes of r, reading them as a layer too; a
// file that is no tar has a layerErr.
func readExportFile(r io.Reader, size int64) (*exportFile, error) {
	h := sha256.New()
	f := &exportFile{}
	if size <= maxMetadataFile {
		raw, err := io.ReadAll(io.LimitReader(r, size))
		if err != nil {
			return nil, err
		}
		h.Write(raw)
		f.raw = raw
		f.layer, f.layerErr = readLayer(bytes.NewReader(raw))
	} else {
		f.layer, f.layerErr = readLayer(io.TeeReader(r, h))
		if _, err := io.Copy(h, r); err != nil {
			return nil, err
		}
	}
	f.digest = hex.EncodeToString(h.Sum(nil))
	return f, nil
}

// readLayer reads a layer tar, gzipped or not, to its end and returns its
// entries and the digest of the uncompressed bytes.
func readLayer(r io.Reader) (exportLayer, error) {
	br := bufio.NewReader(r)
	var plain io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return exportLayer{}, err
		}
		plain = zr
	}
	dh := sha256.New()
	tr := tar.NewReader(io.TeeReader(plain, dh))
	var l exportLayer
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return exportLayer{}, err
		}
		e := LayerEntry{Name: path.Clean("/" + hdr.Name)[1:], Type: hdr.Typeflag, Mode: hdr.Mode & 0o7777, Size: hdr.Size, Linkname: hdr.Linkname}
		if hdr.Typeflag == tar.TypeReg {
			fh := sha256.New()
			if _, err := io.Copy(fh, tr); err != nil {
				return exportLayer{}, err
			}
			e.Digest = hex.EncodeToString(fh.Sum(nil))
		}
		l.entries = append(l.entries, e)
	}
	// The padding after the end marker is part of the layer's digest.
	if _, err := io.Copy(dh, plain); err != nil {
		return exportLayer{}, err
	}
	l.diffID = hex.EncodeToString(dh.Sum(nil))
	return l, nil
}

// capReader reads at most left bytes of r; one more is ErrImageTooLarge.
type capReader struct {
	r    io.Reader
	left int64
	over bool
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		c.over = true
		return 0, ErrImageTooLarge
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// explain is err, or ErrImageTooLarge when the cap cut the export.
func (c *capReader) explain(err error) error {
	if c.over && !errors.Is(err, ErrImageTooLarge) {
		return fmt.Errorf("%w (%v)", ErrImageTooLarge, err)
	}
	return err
}
