package kubeversion

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct{ module, git, ua string }{
		{"v0.37.2", "v1.37.2", "kube-probe/1.37"},
		{"v0.38.0-rc.1", "v1.38.0", "kube-probe/1.38"},
		{"v0.37.0-20250101000000-abcdef012345", "v1.37.0", "kube-probe/1.37"},
		{"v0.40.1+incompatible", "v1.40.1", "kube-probe/1.40"},
		{"v0.", "v1.37.0", "kube-probe/1.37"}, // no minor: the fallback
	} {
		r := parse(tc.module)
		if r.GitVersion() != tc.git || r.UserAgent("probe") != tc.ua {
			t.Errorf("%s: %s %s, want %s %s", tc.module, r.GitVersion(), r.UserAgent("probe"), tc.git, tc.ua)
		}
	}
	// The build's own: the module this binary was built with.
	if r := Get(); r.Major != "1" || r.Minor == "" {
		t.Errorf("Get() = %+v", r)
	}
}
