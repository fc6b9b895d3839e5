package config

import (
	"strings"
	"testing"

	"github.com/berth-dev/berth/model"
)

func TestPodSecurityDefaultsAndAlias(t *testing.T) {
	c, err := Load(flags(t, "--node-name", "n1"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]model.PodSecurityLevel{"file": "privileged", "http": "baseline", "etcd": "baseline", "push": "baseline"}
	for src, l := range want {
		if c.PodSecurity[src] != l || c.HostPorts[src].String() != "1024-65535" {
			t.Errorf("%s: level %q ports %q", src, c.PodSecurity[src], c.HostPorts[src])
		}
	}
	if c.MaxContainersPerPod != 100 || len(c.AllowedUnsafeSysctls) != 0 {
		t.Errorf("max containers %d, sysctls %v", c.MaxContainersPerPod, c.AllowedUnsafeSysctls)
	}

	t.Setenv("BERTH_SOURCES_HTTP_ALLOW_HOST_ACCESS", "true")
	t.Setenv("BERTH_SOURCES_ETCD_POD_SECURITY", "restricted")
	t.Setenv("BERTH_SOURCES_ETCD_HOST_PORTS", "8000-8999, 443")
	c, err = Load(flags(t, "--node-name", "n1"))
	if err != nil {
		t.Fatal(err)
	}
	if c.PodSecurity["http"] != model.LevelPrivileged || c.PodSecurity["etcd"] != model.LevelRestricted ||
		!c.HostPorts["etcd"].Contains(443) || c.HostPorts["etcd"].Contains(1024) {
		t.Errorf("levels %v ports %v", c.PodSecurity, c.HostPorts)
	}
}

func TestPodSecurityErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct{ env, value, want string }{
		{"BERTH_SOURCES_PUSH_POD_SECURITY", "lax", `sources.push.pod_security: "lax" is not one of privileged, baseline, restricted`},
		{"BERTH_SOURCES_HTTP_HOST_PORTS", "80-70", "sources.http.host_ports"},
		{"BERTH_SOURCES_HTTP_HOST_PORTS", "70000", "sources.http.host_ports"},
		{"BERTH_MAX_CONTAINERS_PER_POD", "0", "max_containers_per_pod"},
		{"BERTH_ALLOWED_UNSAFE_SYSCTLS", "net.*.x", "allowed_unsafe_sysctls"},
		{"BERTH_SOURCES_PUSH_ENABLED", "true", "sources.push.token_file: the push source needs a token file"},
	} {
		t.Run(tc.env+"="+tc.value, func(t *testing.T) {
			t.Setenv(tc.env, tc.value)
			_, err := Load(flags(t, "--node-name", "n1"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
	// allow_host_access: true contradicting an explicit lower level.
	t.Setenv("BERTH_SOURCES_PUSH_ALLOW_HOST_ACCESS", "true")
	t.Setenv("BERTH_SOURCES_PUSH_POD_SECURITY", "baseline")
	if _, err := Load(flags(t, "--node-name", "n1")); err == nil || !strings.Contains(err.Error(), "sources.push.allow_host_access") {
		t.Errorf("contradiction: %v", err)
	}
}

func TestEtcdPasswordOverPlainHTTPRefused(t *testing.T) {
	t.Setenv("BERTH_SOURCES_ETCD_ENDPOINTS", "http://127.0.0.1:2379")
	t.Setenv("BERTH_SOURCES_ETCD_USERNAME", "berth")
	t.Setenv("BERTH_SOURCES_ETCD_PASSWORD", "secret")
	if _, err := Load(flags(t, "--node-name", "n1")); err == nil || !strings.Contains(err.Error(), "sources.etcd.allow_insecure_auth") {
		t.Fatalf("password over http: %v", err)
	}
	t.Setenv("BERTH_SOURCES_ETCD_ALLOW_INSECURE_AUTH", "true")
	if _, err := Load(flags(t, "--node-name", "n1")); err != nil {
		t.Fatalf("allowed: %v", err)
	}
}
