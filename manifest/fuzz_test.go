package manifest

import (
	"testing"

	"github.com/berth-dev/berth/model"
)

// FuzzDecode checks that Decode never panics and that what it accepts is
// valid, defaulted and unique.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(podYAML))
	f.Add([]byte(seedManifest))
	f.Add([]byte(podYAML + "---\n" + seedManifest))
	f.Add([]byte(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"i","livenessProbe":{"httpGet":{"port":"http"}}}]}}]}`))
	f.Add([]byte(`[{"version":"v1beta1","id":"x","containers":[{"name":"a","image":"b","livenessProbe":{"type":"http","httpGet":{"port":"99999999999"}}}]}]`))
	f.Add([]byte("a: &a [*a, *a]\n"))
	f.Add([]byte("--- !tag\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, opts := range []Options{{}, {Level: model.LevelPrivileged}} {
			pods, errs := Decode("fuzz", "f", data, opts)
			seen := map[string]bool{}
			for _, d := range pods {
				key := d.Pod.Namespace + "/" + d.Pod.Name
				if seen[key] {
					t.Fatalf("duplicate pod %s", key)
				}
				seen[key] = true
				if verrs := Validate(d.Pod, opts); len(verrs) > 0 {
					t.Fatalf("accepted an invalid pod: %v", verrs)
				}
				if d.Pod.UID == "" || d.Origin != "f" {
					t.Fatalf("pod %s: uid %q origin %q", key, d.Pod.UID, d.Origin)
				}
			}
			for _, e := range errs {
				if e.Origin != "f" || e.Err == "" {
					t.Fatalf("malformed error %+v", e)
				}
			}
		}
	})
}
