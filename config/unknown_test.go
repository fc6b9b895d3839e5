package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// Keys of the config file berth does not read are warnings naming the key,
// the file and the nearest known key; map-valued keys take any key, and a
// file of known keys gives no warning.
func TestUnknownConfigKeysAreWarned(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	yaml := `serverr:
  port: 1
server:
  adress: 0.0.0.0
  port: 10351
node_labels:
  zone: a
sources:
  http:
    headers:
      X-Token: t
  file:
    path: /tmp/pods
    rescna: 1s
frobnicate: true
`
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(flags(t, "--config", file))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`unknown config key "frobnicate" in ` + file,
		`unknown config key "server.adress" in ` + file + ` (did you mean "server.address"?)`,
		`unknown config key "serverr" in ` + file + ` (did you mean "server"?)`,
		`unknown config key "sources.file.rescna" in ` + file + ` (did you mean "sources.file.rescan"?)`,
	}
	if !reflect.DeepEqual(c.Warnings, want) {
		t.Fatalf("warnings\n%q\nwant\n%q", c.Warnings, want)
	}
	if c.ServerPort != 10351 || c.NodeLabels["zone"] != "a" {
		t.Fatalf("known keys not read: port %d labels %v", c.ServerPort, c.NodeLabels)
	}

	good := filepath.Join(t.TempDir(), "good.yaml")
	if err := os.WriteFile(good, []byte("server:\n  port: 10351\nimage_gc:\n  high_threshold: 90\nsources:\n  etcd:\n    tls:\n      ca_file: /x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(flags(t, "--config", good)); err != nil || len(c.Warnings) != 0 {
		t.Fatalf("known keys: %v %q", err, c.Warnings)
	}
}
