package deploy

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/berth-dev/berth/internal/testutil"
)

// hostCABundle is the CA bundle the Dockerfile's build steps copy.
const hostCABundle = "/etc/ssl/certs/ca-certificates.crt"

// buildFromDockerfile runs the build steps of the Dockerfile's header in the
// repository root, as a user does: the static binary into bin/berth, the
// host's CA bundle into bin/, then the docker CLI's classic build of the
// real Dockerfile and .dockerignore, tagged tag. It fails the test when the
// context sent holds more than those two files.
func buildFromDockerfile(t *testing.T, ctx context.Context, tag string) {
	t.Helper()
	root := testutil.ModuleRoot(t)
	run := func(env []string, name string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	run([]string{"CGO_ENABLED=0"}, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", "bin/berth", ".")
	run(nil, "cp", hostCABundle, "bin/")
	// The classic builder (the engine is 20.10) reports the context size.
	out := run([]string{"DOCKER_BUILDKIT=0"}, "docker", "build", "-t", tag, ".")
	sent, err := contextSize(out)
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, f := range []string{"bin/berth", "bin/ca-certificates.crt"} {
		fi, err := os.Stat(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		want += fi.Size()
	}
	// Tar headers and the CLI's rounding to three digits fit in 1%.
	if sent > want+want/100 {
		t.Errorf("docker build sent %d bytes of context, more than bin/berth and the CA bundle (%d): .dockerignore lets more through", sent, want)
	}
}

var contextSizeRE = regexp.MustCompile(`Sending build context to Docker daemon\s+([0-9.]+)([kMG]?B)`)

// contextSize reads the bytes sent from the classic builder's output.
func contextSize(out string) (int64, error) {
	m := contextSizeRE.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("no build context size in docker build's output:\n%s", out)
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, err
	}
	unit := map[string]float64{"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}[m[2]]
	return int64(n * unit), nil
}
