// Package kubeversion is the Kubernetes release berth speaks: the one of
// the k8s.io/apimachinery module built in (v0.37.2 is Kubernetes 1.37.2).
// The API's /version and the probes' User-Agent derive from it, so they
// name the same release.
package kubeversion

import (
	"runtime/debug"
	"strings"
)

// fallback is the apimachinery version assumed when the build carries no
// module versions (a test binary built without module information).
const fallback = "v0.37.0"

// Release is a Kubernetes release: Major and Minor as /version reports
// them ("1", "37") and Patch the rest of the version ("2").
type Release struct {
	Major, Minor, Patch string
}

// Get is the release of the k8s.io/apimachinery module built in.
func Get() Release { return parse(apimachinery()) }

// GitVersion is the release as Kubernetes writes it: "v1.37.2".
func (r Release) GitVersion() string { return "v" + r.Major + "." + r.Minor + "." + r.Patch }

// UserAgent is the User-Agent the kubelet sends for purpose: "probe" for
// its HTTP and gRPC probes ("kube-probe/1.37"), "lifecycle" for its HTTP
// lifecycle hooks.
func (r Release) UserAgent(purpose string) string {
	return "kube-" + purpose + "/" + r.Major + "." + r.Minor
}

// apimachinery is the version of k8s.io/apimachinery in the build.
func apimachinery() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "k8s.io/apimachinery" && strings.HasPrefix(d.Version, "v0.") {
				return d.Version
			}
		}
	}
	return fallback
}

// parse maps an apimachinery module version (v0.MINOR.PATCH, with any
// pre-release or build suffix dropped) to the Kubernetes release
// 1.MINOR.PATCH.
func parse(module string) Release {
	v, _, _ := strings.Cut(strings.TrimPrefix(module, "v0."), "-")
	v, _, _ = strings.Cut(v, "+")
	minor, patch, _ := strings.Cut(v, ".")
	if minor == "" {
		return parse(fallback)
	}
	return Release{Major: "1", Minor: minor, Patch: patch}
}
