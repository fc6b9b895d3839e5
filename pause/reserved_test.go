package pause

import (
	"slices"
	"strings"
	"testing"
)

func TestReservedRepository(t *testing.T) {
	if got := Reserved(""); !slices.Equal(got, []string{Repository}) {
		t.Errorf("Reserved(\"\") = %v", got)
	}
	if got := Reserved(Repository + ":1"); !slices.Equal(got, []string{Repository}) {
		t.Errorf("Reserved(default) = %v", got)
	}
	repos := Reserved("registry.k8s.io/pause:3.9")
	if !slices.Equal(repos, []string{Repository, "registry.k8s.io/pause"}) {
		t.Fatalf("Reserved(registry.k8s.io/pause:3.9) = %v", repos)
	}
	digest := "@sha256:" + strings.Repeat("ab", 32)
	for image, want := range map[string]string{
		"berth/pause:d7784547d26ebdf7":       Repository,
		"berth/pause":                        Repository,
		"docker.io/berth/pause:latest":       Repository,
		"index.docker.io/berth/pause:1":      Repository,
		"berth/pause" + digest:               Repository,
		"registry.k8s.io/pause:3.10":         "registry.k8s.io/pause",
		"registry.k8s.io/pause" + digest:     "registry.k8s.io/pause",
		"berth/pause-not:1":                  "",
		"berth/testapp:1":                    "",
		"localhost/berth/pause:1":            "",
		"docker.io/library/pause:1":          "",
		"k8s.io/pause:3.9":                   "",
		"Berth/Pause:1":                      "",
		"sha256:" + strings.Repeat("ab", 32): "",
		"":                                   "",
	} {
		got, ok := ReservedRepository(image, repos)
		if got != want || ok != (want != "") {
			t.Errorf("ReservedRepository(%q) = %q, %v; want %q", image, got, ok, want)
		}
	}
}
