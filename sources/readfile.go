package sources

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/berth-dev/berth/manifest"
)

// MaxManifestBytes is the size limit of one manifest file.
const MaxManifestBytes = 10 << 20

// ReadResult is how reading one manifest file went.
type ReadResult int

const (
	ReadOK       ReadResult = iota
	ReadFailed              // an error of the read itself (in the decode's errors)
	ReadVanished            // gone before it could be opened
)

// FileDecode is what one manifest file declares, and the file's own
// warning ("" for none: a Secret in a file group or others may read has
// one, naming the file).
type FileDecode struct {
	manifest.Decoded
	Warning string
}

// DecodeFile reads and decodes one manifest file (at most
// MaxManifestBytes) as the file source and LoadAll read it: origins named
// by file, pods of source.
func DecodeFile(source, file string, opts manifest.Options) (FileDecode, ReadResult) {
	data, mode, err := readManifest(file)
	if errors.Is(err, fs.ErrNotExist) {
		return FileDecode{}, ReadVanished
	}
	if err != nil {
		return FileDecode{Decoded: manifest.Decoded{Errors: []manifest.ManifestError{{Origin: file, Err: err.Error()}}}}, ReadFailed
	}
	dec := manifest.DecodeAll(source, file, data, opts)
	return FileDecode{Decoded: dec, Warning: secretFileWarning(file, mode, dec)}, ReadOK
}

// DeclaresNothing reports whether a file's decode has nothing to say: no
// document (empty, or only comments) and no error.
func DeclaresNothing(d manifest.Decoded) bool {
	return len(d.Pods)+len(d.Objects)+len(d.Errors)+len(d.Warnings) == 0
}

// NothingWarning is the warning of a file that declares nothing.
func NothingWarning(file string) string {
	return file + ": declares nothing (the file is empty or holds only comments)"
}

// readManifest returns the content of file and the mode of the file read.
func readManifest(file string) ([]byte, fs.FileMode, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, 0, unwrapPathError(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, unwrapPathError(err)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxManifestBytes+1))
	if err != nil {
		return nil, 0, unwrapPathError(err)
	}
	if len(data) > MaxManifestBytes {
		return nil, 0, fmt.Errorf("file is larger than %d MiB", MaxManifestBytes>>20)
	}
	return data, fi.Mode(), nil
}

// unwrapPathError drops the path from err, which the ManifestError's origin
// already names.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
