package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// scripts/run-example.sh prints what to try before berth starts: berth
// commands that exist, kubectl through berth kubeconfig, and the URLs of
// the example pods' host ports.
func TestRunExamplePrintsNextSteps(t *testing.T) {
	script, err := os.ReadFile("../scripts/run-example.sh")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(script), "cat <<EOF\n")
	block, _, _ = strings.Cut(block, "\nEOF\n")
	if !ok || !strings.Contains(string(script), "EOF\nexec ./bin/berth run") {
		t.Fatal("run-example.sh prints nothing before it starts berth")
	}
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if l, _, _ = strings.Cut(l, "#"); strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	for _, want := range []string{"bin/berth get pods", "bin/berth kubeconfig > /tmp/berth.kubeconfig",
		"kubectl --kubeconfig /tmp/berth.kubeconfig get pods"} {
		if !contains(lines, want) {
			t.Errorf("run-example.sh does not print %q; it prints:\n%s", want, block)
		}
	}

	examples, _ := filepath.Glob("../examples/pods/*.yaml")
	var manifests string
	for _, f := range examples {
		b, _ := os.ReadFile(f)
		manifests += string(b)
	}
	url := regexp.MustCompile(`^curl http://127\.0\.0\.1:(\d+)/`)
	urls := 0
	for _, l := range lines {
		if m := url.FindStringSubmatch(l); m != nil {
			urls++
			if !strings.Contains(manifests, "hostPort: "+m[1]+"\n") {
				t.Errorf("%q: no example pod has hostPort %s", l, m[1])
			}
		}
		args, ok := strings.CutPrefix(l, "bin/berth ")
		if !ok {
			continue
		}
		args, _, _ = strings.Cut(args, ">")
		if code := quietMain(t, append(strings.Fields(args), "--help")); code != 0 {
			t.Errorf("%q: berth %s --help exits %d", l, args, code)
		}
	}
	if urls == 0 {
		t.Error("run-example.sh prints no URL of an example pod")
	}
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}

// quietMain runs Main with its stdout and stderr discarded.
func quietMain(t *testing.T, args []string) int {
	t.Helper()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	stdout, stderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = null, null
	defer func() { os.Stdout, os.Stderr = stdout, stderr }()
	return Main(args)
}
