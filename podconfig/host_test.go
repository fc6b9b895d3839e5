package podconfig

import (
	"io/fs"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// memHost is an in-memory Host: paths and their modes.
type memHost struct{ files map[string]fs.FileMode }

type memInfo struct {
	name string
	mode fs.FileMode
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return 0 }
func (i memInfo) Mode() fs.FileMode  { return i.mode }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.mode.IsDir() }
func (i memInfo) Sys() any           { return nil }

func (h *memHost) ReadFile(path string) ([]byte, error) { return nil, fs.ErrNotExist }
func (h *memHost) Stat(path string) (fs.FileInfo, error) {
	m, ok := h.files[path]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return memInfo{path, m}, nil
}
func (h *memHost) MkdirAll(path string) error   { h.files[path] = fs.ModeDir | 0o755; return nil }
func (h *memHost) CreateFile(path string) error { h.files[path] = 0o644; return nil }

// The typed hostPath checks are the kubelet's, made through Host alone.
func TestHostPathTypesThroughHost(t *testing.T) {
	h := &memHost{files: map[string]fs.FileMode{"/d": fs.ModeDir | 0o755, "/f": 0o644, "/s": fs.ModeSocket, "/c": fs.ModeDevice | fs.ModeCharDevice}}
	b := New(Config{}, nil, h)
	for _, tc := range []struct {
		path string
		typ  v1.HostPathType
		err  string
	}{
		{"/d", v1.HostPathDirectory, ""},
		{"/f", v1.HostPathDirectory, "is not a directory"},
		{"/f", v1.HostPathFile, ""},
		{"/d", v1.HostPathFile, "is not a file"},
		{"/s", v1.HostPathSocket, ""},
		{"/c", v1.HostPathCharDev, ""},
		{"/c", v1.HostPathBlockDev, "is not a block device"},
		{"/missing", v1.HostPathDirectory, "is not a directory"},
		{"/new", v1.HostPathFileOrCreate, ""},
	} {
		err := b.prepareHostPath(&v1.HostPathVolumeSource{Path: tc.path, Type: ptr.To(tc.typ)})
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s as %s: %v, want %q", tc.path, tc.typ, err, tc.err)
		}
	}
	if m, ok := h.files["/new"]; !ok || !m.IsRegular() {
		t.Error("FileOrCreate did not create the file through Host")
	}
}
