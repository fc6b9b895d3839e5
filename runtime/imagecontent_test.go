package runtime

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// tarOf is a tar of files (name → bytes, in order) and symlinks.
type tarFile struct {
	name, link string
	data       []byte
	mode       int64
}

func tarOf(t *testing.T, files ...tarFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg}
		if hdr.Mode == 0 {
			hdr.Mode = 0o644
		}
		if f.link != "" {
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeSymlink, f.link, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// export is a legacy-layout export of one image holding layer, with cfg
// as its config's "config"; it returns the export and the image ID.
func export(t *testing.T, layer []byte, cfg map[string]any, oci bool) ([]byte, string) {
	t.Helper()
	diff := layer
	if len(layer) > 1 && layer[0] == 0x1f && layer[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(layer))
		if err != nil {
			t.Fatal(err)
		}
		var plain bytes.Buffer
		if _, err := plain.ReadFrom(zr); err != nil {
			t.Fatal(err)
		}
		diff = plain.Bytes()
	}
	config, _ := json.Marshal(map[string]any{"config": cfg, "rootfs": map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + hexSum(diff)}}})
	id := hexSum(config)
	cfgName, layerName := id+".json", "abc/layer.tar"
	if oci {
		cfgName, layerName = "blobs/sha256/"+id, "blobs/sha256/"+hexSum(layer)
	}
	manifest, _ := json.Marshal([]map[string]any{{"Config": cfgName, "Layers": []string{layerName}}})
	return tarOf(t, tarFile{name: cfgName, data: config}, tarFile{name: layerName, data: layer},
		tarFile{name: "manifest.json", data: manifest}), "sha256:" + id
}

func TestReadImageExport(t *testing.T) {
	prog := []byte("\x7fELF pause program")
	layer := tarOf(t, tarFile{name: "pause", data: prog, mode: 0o755})
	cfg := map[string]any{"Entrypoint": []string{"/pause"}, "Env": []string{"PATH=/bin"}, "Volumes": map[string]any{"/v": struct{}{}}}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(layer)
	zw.Close()
	for _, tc := range []struct {
		name  string
		layer []byte
		oci   bool
	}{{"legacy", layer, false}, {"oci", layer, true}, {"gzip", gz.Bytes(), true}} {
		t.Run(tc.name, func(t *testing.T) {
			data, id := export(t, tc.layer, cfg, tc.oci)
			got, err := ReadImageExport(bytes.NewReader(data), id, int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			want := []LayerEntry{{Name: "pause", Type: tar.TypeReg, Mode: 0o755, Size: int64(len(prog)), Digest: hexSum(prog)}}
			if got.ID != id || len(got.Layers) != 1 || !slices.Equal(got.Layers[0].Entries, want) {
				t.Errorf("content %+v, want ID %s and layer %+v", got, id, want)
			}
			if !slices.Equal(got.Config.Entrypoint, []string{"/pause"}) || !slices.Equal(got.Config.Volumes, []string{"/v"}) {
				t.Errorf("config %+v", got.Config)
			}
		})
	}

	data, id := export(t, layer, cfg, false)
	t.Run("another ID", func(t *testing.T) {
		if _, err := ReadImageExport(bytes.NewReader(data), "sha256:"+strings.Repeat("0", 64), int64(len(data))); err == nil {
			t.Error("an export read as another image's")
		}
	})
	t.Run("too large", func(t *testing.T) {
		if _, err := ReadImageExport(bytes.NewReader(data), id, int64(len(data))/2); !errors.Is(err, ErrImageTooLarge) {
			t.Errorf("export over the cap: %v, want ErrImageTooLarge", err)
		}
	})
	t.Run("layer swapped", func(t *testing.T) {
		other := tarOf(t, tarFile{name: "pause", data: []byte("impostor"), mode: 0o755})
		swapped := bytes.Replace(data, layer, other[:len(layer)], 1)
		if len(other) != len(layer) || bytes.Equal(swapped, data) {
			t.Fatal("the test's layers differ in size")
		}
		if _, err := ReadImageExport(bytes.NewReader(swapped), id, int64(len(data))); err == nil {
			t.Error("a layer other than the config's was read as the image's")
		}
	})
	t.Run("linked layer", func(t *testing.T) {
		var m []map[string]any
		var config []byte
		tr := tar.NewReader(bytes.NewReader(data))
		for {
			hdr, err := tr.Next()
			if err != nil {
				break
			}
			if strings.HasSuffix(hdr.Name, ".json") && hdr.Name != "manifest.json" {
				config = make([]byte, hdr.Size)
				tr.Read(config)
			}
		}
		m = []map[string]any{{"Config": strings.TrimPrefix(id, "sha256:") + ".json", "Layers": []string{"def/layer.tar"}}}
		manifest, _ := json.Marshal(m)
		linked := tarOf(t, tarFile{name: strings.TrimPrefix(id, "sha256:") + ".json", data: config},
			tarFile{name: "abc/layer.tar", data: layer}, tarFile{name: "def/layer.tar", link: "../abc/layer.tar"},
			tarFile{name: "manifest.json", data: manifest})
		got, err := ReadImageExport(bytes.NewReader(linked), id, int64(len(linked)))
		if err != nil || len(got.Layers) != 1 || len(got.Layers[0].Entries) != 1 {
			t.Errorf("layer linked to another: %+v %v", got, err)
		}
	})
}

// The engine's export of an image it built holds the built file, bound to
// the image's ID.
func TestImageContentOnEngine(t *testing.T) {
	d := testDocker(t)
	exe := []byte("#!/not-run\n" + randHex(8))
	tag := "berth/content-test:" + randHex(4)
	if err := d.BuildImageData(t.Context(), tag, exe, "/prog", []string{"/prog", "x"}); err != nil {
		t.Fatal(err)
	}
	info, err := d.InspectImage(t.Context(), tag)
	if err != nil {
		t.Fatal(err)
	}
	defer d.RemoveImage(t.Context(), info.ID)
	got, err := d.ImageContent(t.Context(), tag, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := []LayerEntry{{Name: "prog", Type: tar.TypeReg, Mode: 0o755, Size: int64(len(exe)), Digest: hexSum(exe)}}
	if got.ID != info.ID || len(got.Layers) != 1 || !slices.Equal(got.Layers[0].Entries, want) {
		t.Errorf("content %+v, want ID %s and one layer %+v", got, info.ID, want)
	}
	if !slices.Equal(got.Config.Entrypoint, []string{"/prog", "x"}) || got.Config.Cmd != nil || got.Config.User != "" {
		t.Errorf("config %+v", got.Config)
	}
	if _, err := d.ImageContent(t.Context(), testImage, 1<<10); !errors.Is(err, ErrImageTooLarge) {
		t.Errorf("testapp under a 1 KiB limit: %v, want ErrImageTooLarge", err)
	}
	if _, err := d.ImageContent(t.Context(), "berth/absent:"+randHex(4), 1<<20); !errors.Is(err, ErrImageNotFound) {
		t.Errorf("absent image: %v, want ErrImageNotFound", err)
	}
}
