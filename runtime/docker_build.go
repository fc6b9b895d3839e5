package runtime

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/docker/docker/api/types/build"
)

// buildPayloadName is the binary's name inside the build context.
const buildPayloadName = "payload"

// FileDigest is the hex sha256 of the file at path.
func FileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// BuildImage builds tag FROM scratch holding the static executable binary (a
// host path) at path inside the image, with the given entrypoint. It uses the
// classic builder: Debian's engine 20.10 has no BuildKit session support for
// API clients.
func (d *dockerBuilder) BuildImage(ctx context.Context, tag, binary, path string, entrypoint []string) error {
	f, err := os.Open(binary)
	if err != nil {
		return fmt.Errorf("build image %s: %w", tag, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("build image %s: %w", tag, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("build image %s: %s is not a regular file", tag, binary)
	}
	return d.build(ctx, tag, f, st.Size(), path, entrypoint)
}

// BuildImageData is BuildImage with the executable given as its bytes.
func (d *dockerBuilder) BuildImageData(ctx context.Context, tag string, exe []byte, path string, entrypoint []string) error {
	return d.build(ctx, tag, bytes.NewReader(exe), int64(len(exe)), path, entrypoint)
}

// build builds tag from the size bytes of exe.
func (d *dockerBuilder) build(ctx context.Context, tag string, exe io.Reader, size int64, path string, entrypoint []string) error {
	buildCtx, err := buildContext(exe, size, path, entrypoint)
	if err != nil {
		return fmt.Errorf("build image %s: %w", tag, err)
	}
	resp, err := d.cli.ImageBuild(ctx, buildCtx, build.ImageBuildOptions{
		Tags:        []string{tag},
		Dockerfile:  "Dockerfile",
		Remove:      true,
		ForceRemove: true,
		Version:     build.BuilderV1,
	})
	if err != nil {
		return fmt.Errorf("build image %s: %w", tag, err)
	}
	defer resp.Body.Close()
	if err := drainJSONMessages(resp.Body); err != nil {
		return fmt.Errorf("build image %s: %w", tag, err)
	}
	return nil
}

// dockerfile returns the Dockerfile of a FROM scratch image holding the
// build context's payload at path.
func dockerfile(path string, entrypoint []string, digest string) (string, error) {
	copyArgs, err := json.Marshal([]string{buildPayloadName, path})
	if err != nil {
		return "", err
	}
	df := "FROM scratch\nCOPY " + string(copyArgs) + "\n"
	if len(entrypoint) > 0 {
		ep, err := json.Marshal(entrypoint)
		if err != nil {
			return "", err
		}
		df += "ENTRYPOINT " + string(ep) + "\n"
	}
	df += "LABEL " + labelImage + "=true " + LabelImageBinary + "=" + digest + "\n"
	return df, nil
}

// buildContext returns an in-memory tar holding the Dockerfile and the
// size bytes of exe.
func buildContext(exe io.Reader, size int64, path string, entrypoint []string) (io.Reader, error) {
	if path == "" || path[0] != '/' {
		return nil, fmt.Errorf("image path %q is not absolute", path)
	}

	// A fixed modification time keeps the context, and so the builder's
	// cache, identical for the same binary. The payload comes first and is
	// hashed as it is copied, so the Dockerfile's digest label is that of
	// the bytes the image holds, read once.
	mtime := time.Unix(0, 0)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{
		Name: buildPayloadName, Mode: 0o755, Size: size, ModTime: mtime, Typeflag: tar.TypeReg,
	}); err != nil {
		return nil, err
	}
	h := sha256.New()
	if n, err := io.Copy(tw, io.TeeReader(exe, h)); err != nil {
		return nil, fmt.Errorf("reading the executable: %w", err)
	} else if n != size {
		return nil, fmt.Errorf("reading the executable: size changed while reading")
	}
	df, err := dockerfile(path, entrypoint, hex.EncodeToString(h.Sum(nil)))
	if err != nil {
		return nil, err
	}
	if err := tw.WriteHeader(&tar.Header{
		Name: "Dockerfile", Mode: 0o644, Size: int64(len(df)), ModTime: mtime, Typeflag: tar.TypeReg,
	}); err != nil {
		return nil, err
	}
	if _, err := io.WriteString(tw, df); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return &buf, nil
}
