package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestUntrustedPushCannotReachTheHost replays the security audit as a
// push client would (push token, default pod_security baseline): a UID
// aimed at a host directory, a UID copied from a trusted pod, and each
// baseline violation. Nothing reaches the host, the trusted pod's data
// survives the copycat's deletion, and every refusal names its field.
func TestUntrustedPushCannotReachTheHost(t *testing.T) {
	b, admin, push := startWithPush(t)

	// A host directory outside root_dir that a hostile UID aims at.
	victim := t.TempDir()
	if err := os.WriteFile(filepath.Join(victim, "keep"), []byte("host data"), 0o600); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(filepath.Join(b.Root, "pods"), victim)
	if err != nil {
		t.Fatal(err)
	}
	hostile := "aaaaaaaa/../" + rel
	if filepath.Join(b.Root, "pods", hostile) != victim {
		t.Fatalf("the hostile uid %q does not aim at %s", hostile, victim)
	}
	withUID := func(name, uid string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s, uid: %q}\nspec:\n  terminationGracePeriodSeconds: 2\n"+
			"  volumes: [{name: data, emptyDir: {}}]\n  containers:\n  - name: app\n    image: %s\n    args: [sleep]\n"+
			"    volumeMounts: [{name: data, mountPath: /data}]\n", name, uid, testImage)
	}
	code, body := authDo(t, "PUT", b.URL("/pods/default/escape"), push, withUID("escape", hostile))
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "metadata.uid: Invalid value") {
		t.Errorf("hostile uid: %d %s", code, body)
	}

	// A trusted file pod with data in its emptyDir.
	writeFile(t, b.Pods, "trusted.yaml", fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: trusted}\nspec:\n  terminationGracePeriodSeconds: 2\n"+
		"  volumes: [{name: data, emptyDir: {}}]\n  containers:\n  - name: app\n    image: %s\n    args: [report, --write, /data/trusted, --sleep]\n"+
		"    volumeMounts: [{name: data, mountPath: /data}]\n", testImage))
	trusted := waitPodRunning(t, b.Node, "trusted", "app")
	uidOf := func(name string) string {
		code, body := authDo(t, "GET", b.URL("/pods/default/"+name), admin, "")
		var p v1.Pod
		if err := json.Unmarshal([]byte(body), &p); code != 200 || err != nil {
			t.Fatalf("GET %s: %d %v", name, code, err)
		}
		return string(p.UID)
	}
	trustedUID := uidOf("trusted")
	marker := filepath.Join(b.Root, "pods", trustedUID, "volumes", "data", "trusted")
	waitFor(t, waitLong, "the trusted pod's marker on the host", func() (bool, string) {
		_, err := os.Stat(marker)
		return err == nil, fmt.Sprint(err)
	})

	// A pushed pod declaring the trusted pod's UID gets one of its own.
	if code, body := authDo(t, "PUT", b.URL("/pods/default/copycat"), push, withUID("copycat", trustedUID)); code != http.StatusCreated {
		t.Fatalf("copycat: %d %s", code, body)
	}
	waitPodRunning(t, b.Node, "copycat", "app")
	if got := uidOf("copycat"); got == trustedUID {
		t.Fatalf("the pushed pod took the trusted pod's uid %s", got)
	}
	if code, body := authDo(t, "DELETE", b.URL("/pods/default/copycat"), push, ""); code != http.StatusOK {
		t.Fatalf("delete copycat: %d %s", code, body)
	}
	waitPodGone(t, b.Node, "copycat")
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("deleting the copycat removed the trusted pod's data: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(victim, "keep")); err != nil || string(b) != "host data" {
		t.Errorf("host directory: %q %v", b, err)
	}
	if entries, _ := os.ReadDir(victim); len(entries) != 1 {
		t.Errorf("berth wrote into the host directory: %v", entries)
	}

	// Each baseline violation of the audit is refused by field and level.
	pod := func(name, podSpec, ctrSpec string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n%s  containers:\n  - name: app\n    image: %s\n    args: [sleep]\n%s",
			name, podSpec, testImage, ctrSpec)
	}
	for _, tc := range []struct{ name, manifest, field string }{
		{"seccomp", pod("seccomp", "  securityContext: {seccompProfile: {type: Unconfined}}\n", ""), "spec.securityContext.seccompProfile.type"},
		{"apparmor", pod("apparmor", "", "    securityContext: {appArmorProfile: {type: Localhost, localhostProfile: unconfined}}\n"), "spec.containers[0].securityContext.appArmorProfile.localhostProfile"},
		{"selinux", pod("selinux", "  securityContext: {seLinuxOptions: {type: spc_t}}\n", ""), "spec.securityContext.seLinuxOptions.type"},
		{"lowport", pod("lowport", "", "    ports: [{containerPort: 80, hostPort: 80}]\n"), "spec.containers[0].ports[0].hostPort"},
		{"sysctl", pod("sysctl", "  securityContext: {sysctls: [{name: kernel.core_pattern, value: '|/tmp/x'}]}\n", ""), "spec.securityContext.sysctls[0].name"},
		{"probe", pod("probe", "", "    readinessProbe: {tcpSocket: {port: 10350, host: 127.0.0.1}}\n"), "spec.containers[0].readinessProbe.tcpSocket.host"},
		{"hostprocess", pod("hostprocess", "", "    securityContext: {windowsOptions: {hostProcess: true}}\n"), "spec.containers[0].securityContext.windowsOptions.hostProcess"},
	} {
		code, body := authDo(t, "PUT", b.URL("/pods/default/"+tc.name), push, tc.manifest)
		if code != http.StatusUnprocessableEntity || !strings.Contains(body, tc.field+": Forbidden: violates PodSecurity \"baseline\"") {
			t.Errorf("%s: %d %s", tc.name, code, body)
		}
	}
	many := pod("many", "", "")
	for i := range 100 {
		many += fmt.Sprintf("  - {name: c%d, image: %s, args: [sleep]}\n", i, testImage)
	}
	if code, body := authDo(t, "PUT", b.URL("/pods/default/many"), push, many); code != http.StatusUnprocessableEntity || !strings.Contains(body, "spec.containers: Too many: 101") {
		t.Errorf("101 containers: %d %s", code, body)
	}
	assertStable(t, b.Node, "trusted", trusted, 0)
}

// TestUnsafeSysctlRefusedAtLoad: a file pod (privileged level) asking for a
// sysctl outside the kubelet's safe set is refused by field at load, where
// it used to be created and fail at every start; allowed_unsafe_sysctls
// lets a namespaced one through.
func TestUnsafeSysctlRefusedAtLoad(t *testing.T) {
	b := startBerth(t, Options{Env: []string{"BERTH_ALLOWED_UNSAFE_SYSCTLS=net.core.*"}})
	sysctlPod := func(name, sysctl, value string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  terminationGracePeriodSeconds: 2\n"+
			"  securityContext: {sysctls: [{name: %s, value: %q}]}\n  containers:\n  - {name: app, image: %s, args: [sleep]}\n", name, sysctl, value, testImage)
	}
	writeFile(t, b.Pods, "core.yaml", sysctlPod("core", "kernel.core_pattern", "|/tmp/x"))
	writeFile(t, b.Pods, "msg.yaml", sysctlPod("msg", "kernel.msgmax", "65536"))
	writeFile(t, b.Pods, "somax.yaml", sysctlPod("somax", "net.core.somaxconn", "1024"))
	logLine(t, b, "core.yaml", "default/core", "spec.securityContext.sysctls[0].name", "SysctlForbidden")
	logLine(t, b, "msg.yaml", "default/msg", "spec.securityContext.sysctls[0].name", "allowed_unsafe_sysctls")
	running := waitPodRunning(t, b.Node, "somax", "app")
	sb := inspect(t, running["POD"])
	if got := sb.HostConfig.Sysctls["net.core.somaxconn"]; got != "1024" {
		t.Errorf("sandbox sysctls %v", sb.HostConfig.Sysctls)
	}
	for _, name := range []string{"core", "msg"} {
		if list := podContainers(t, b.Node, name); len(list) != 0 {
			t.Errorf("refused pod %s has containers %s", name, describe(list))
		}
	}
}
