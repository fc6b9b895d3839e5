package podconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podfs"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/runtime/fake"
)

// envFileValue reads the kubelet's env file format (KEP-3721): VAR='value'
// lines, values literal within single quotes and possibly multi-line,
// comments and blank lines skipped, the first assignment of the key wins.
func TestEnvFileValue(t *testing.T) {
	file := "# settings\n" +
		"\n" +
		"  DB_ADDRESS='address'\n" +
		"REST_ENDPOINT='endpoint' # where\n" +
		"LITERAL='$(HOME) \\n \"x\"'\r\n" +
		"MULTI='one\n" +
		"two'\n" +
		"EMPTY=''\n" +
		"SPACED= 'ignored'\n" +
		"DB_ADDRESS='second'\n"
	for key, want := range map[string]string{
		"DB_ADDRESS": "address", "REST_ENDPOINT": "endpoint", "LITERAL": `$(HOME) \n "x"`,
		"MULTI": "one\ntwo", "EMPTY": "", "SPACED": "",
	} {
		got, ok, err := envFileValue([]byte(file), key)
		if err != nil || !ok || got != want {
			t.Errorf("%s: %q %v %v, want %q", key, got, ok, err, want)
		}
	}
	if got, ok, err := envFileValue([]byte(file), "NOPE"); ok || err != nil {
		t.Errorf("absent key: %q %v %v", got, ok, err)
	}
	for _, bad := range []struct{ file, msg string }{
		{"A='1'\nB\n", "line 2: missing '='"},
		{"A ='1'\n", "line 1: whitespace before '='"},
		{"=x\n", "line 1: empty variable name"},
		{"A=1\n", "line 1: value must be enclosed in single quotes"},
		{"A='1' x\n", "line 1: unexpected content after closing quote"},
		{"A='1\nB\n", "starting at line 1: unclosed single quote"},
		{"A='1\nB='2'\n", "line 2: unexpected content after closing quote"},
	} {
		_, _, err := envFileValue([]byte(bad.file), "KEY")
		if err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%q: %v, want %q", bad.file, err, bad.msg)
		}
	}
	if got, ok, err := envFileValue([]byte("KEY='v'\nbroken\n"), "KEY"); !ok || err != nil || got != "v" {
		t.Errorf("lines after the key are not read, as the kubelet's: %q %v %v", got, ok, err)
	}
}

// A container's fileKeyRef reads the env file an init container wrote in
// the pod's emptyDir (kubernetes/website pods/inject/envars-file-container.yaml);
// a missing file or key is an error unless optional, which leaves the
// variable unset.
func TestFileKeyRefEnv(t *testing.T) {
	c := mapper(t)
	root := podfs.New(c.cfg.RootDir)
	ref := func(name, key string, optional bool) v1.EnvVar {
		return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{FileKeyRef: &v1.FileKeySelector{
			VolumeName: "config", Path: "config.env", Key: key, Optional: ptr.To(optional)}}}
	}
	mk := func(env ...v1.EnvVar) *model.Pod {
		return specPod(func(p *v1.Pod) {
			p.Spec.Volumes = []v1.Volume{{Name: "config", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
			p.Spec.Containers[0].Env = env
		})
	}
	p := mk(ref("DB_ADDRESS", "DB_ADDRESS", false), ref("GONE", "GONE", true), v1.EnvVar{Name: "URL", Value: "db://$(DB_ADDRESS)"})
	t.Cleanup(func() { _ = root.RemovePod(string(p.Spec.UID)) })
	if err := c.EnsureVolumes(t.Context(), fake.New(nil), p, true); err != nil {
		t.Fatal(err)
	}
	_, _, err := c.ContainerConfig(p, &p.Spec.Spec.Containers[0], Sandbox{ID: "sb"}, 0, 0, runtime.ImageInfo{}, nil)
	if err == nil || IsMissing(err) || !strings.Contains(err.Error(), `env DB_ADDRESS: env file config.env of volume "config"`) {
		t.Errorf("before the file is written: %v, want an error naming the variable and the file", err)
	}
	opt := mk(ref("GONE", "GONE", true))
	if _, _, err := c.ContainerConfig(opt, &opt.Spec.Spec.Containers[0], Sandbox{ID: "sb"}, 0, 0, runtime.ImageInfo{}, nil); err != nil {
		t.Errorf("an optional missing file: %v", err)
	}
	dir, err := c.emptyDirPath(p.Spec, "config")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.env"), []byte("DB_ADDRESS='address'\nREST_ENDPOINT='endpoint'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := envMap(build(t, c, p, runtime.ImageInfo{}).Env)
	if env["DB_ADDRESS"] != "address" || env["URL"] != "db://address" {
		t.Errorf("env %v, want DB_ADDRESS=address and URL expanded with it", env)
	}
	if v, set := env["GONE"]; set {
		t.Errorf("an optional missing key is set: %q", v)
	}
	missing := mk(ref("X", "NOPE", false))
	_, _, err = c.ContainerConfig(missing, &missing.Spec.Spec.Containers[0], Sandbox{ID: "sb"}, 0, 0, runtime.ImageInfo{}, nil)
	if err == nil || !strings.Contains(err.Error(), `couldn't find key NOPE in env file config.env of volume "config"`) {
		t.Errorf("a missing key: %v", err)
	}
}
