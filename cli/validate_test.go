package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestValidateCommand(t *testing.T) {
	dir := t.TempDir()
	good := dir + "/good.yaml"
	bad := dir + "/bad.yaml"
	mustWrite(t, good, "apiVersion: v1\nkind: Pod\nmetadata: {name: good}\nspec:\n  containers: [{name: a, image: 'img:1'}]\n")
	mustWrite(t, bad, "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec:\n  containers: [{name: a}]\n")
	run := func(args ...string) (string, string, error) {
		cmd := validateCmd()
		var out, errOut bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		cmd.SetArgs(args)
		err := cmd.Execute()
		return out.String(), errOut.String(), err
	}
	if out, _, err := run(good); err != nil || !strings.Contains(out, "1 pod(s) valid") {
		t.Fatalf("good: %q %v", out, err)
	}
	out, errOut, err := run(dir)
	if err == nil || !strings.Contains(errOut, bad+": default/bad: spec.containers[0].image: Required value") {
		t.Fatalf("bad: %q %v", errOut, err)
	}
	if !strings.HasPrefix(out, "1 pod(s) valid\n") { // then cobra's usage, which the root command silences
		t.Errorf("count beside errors: %q", out)
	}
	// A skipped file is named; a missing path does not hide the others.
	mustWrite(t, dir+"/good.yaml.swp", "x")
	out, errOut, err = run(dir, dir+"/missing")
	if err == nil || !strings.Contains(err.Error(), "missing: path does not exist") || !strings.Contains(err.Error(), "1 error(s) in manifests") ||
		!strings.Contains(errOut, dir+"/good.yaml.swp: skipped: an editor swap or backup file") || !strings.HasPrefix(out, "1 pod(s) valid\n") {
		t.Errorf("skipped and missing: out %q err %q %v", out, errOut, err)
	}
	if err := os.Remove(dir + "/good.yaml.swp"); err != nil {
		t.Fatal(err)
	}

	// The levels of the sources, through the same checks.
	priv := dir + "/priv/p.yaml"
	if err := os.MkdirAll(dir+"/priv", 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, priv, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: 'img:1', ports: [{containerPort: 80, hostPort: 8080}], securityContext: {privileged: true}}]\n")
	if _, errOut, err := run(priv); err != nil {
		t.Errorf("privileged pod at the file source's level: %q %v", errOut, err)
	}
	for _, args := range [][]string{{"--network-source", priv}, {"--pod-security", "baseline", priv}} {
		if _, errOut, err := run(args...); err == nil || !strings.Contains(errOut, `spec.containers[0].securityContext.privileged: Forbidden: violates PodSecurity "baseline"`) {
			t.Errorf("%v: %q %v", args, errOut, err)
		}
	}
	if _, errOut, err := run("--pod-security", "restricted", good); err == nil || !strings.Contains(errOut, `spec.containers[0].securityContext.runAsNonRoot: Forbidden: violates PodSecurity "restricted"`) {
		t.Errorf("restricted: %q %v", errOut, err)
	}
	mustWrite(t, priv, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: 'img:1', ports: [{containerPort: 80, hostPort: 8080}]}]\n")
	if _, errOut, err := run("--network-source", "--host-ports", "30000-32767", priv); err == nil || !strings.Contains(errOut, "8080 is outside the source's host_ports 30000-32767") {
		t.Errorf("host ports: %q %v", errOut, err)
	}
	if _, _, err := run("--pod-security", "lax", good); err == nil || !strings.Contains(err.Error(), "--pod-security") {
		t.Errorf("bad level: %v", err)
	}
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
