package benchkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/docker/docker/client"

	"github.com/berth-dev/berth/runtime"
)

// TestImage is the image of every benchmark pod, built from test/testapp
// as the e2e harness builds it.
const TestImage = "berth/testapp:1"

// Setup is what a benchmark makes before it measures anything.
type Setup struct {
	Root       string // the module root: go.mod's directory
	Work       string // a new temp dir holding the binaries; the caller removes it
	BerthBin   string // berth, built from Root with CGO_ENABLED=0
	DockerHost string // $DOCKER_HOST, or the default socket
	Docker     *runtime.Docker
	Client     *client.Client // Docker's API client
}

// Prepare finds the module root, makes the work dir (named after cmd),
// builds berth and, with image, testapp and TestImage from it (rebuilt
// every run, so the image holds the current testapp), and connects to the
// engine, which must answer a ping within 10 s. logf reports the steps.
// On error the returned Setup still holds what was made (Work to remove);
// Docker and Client are set only once the engine answered.
func Prepare(ctx context.Context, cmd string, image bool, logf func(format string, args ...any)) (*Setup, error) {
	s := &Setup{}
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return s, fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return s, fmt.Errorf("run %s inside the berth module", cmd)
	}
	s.Root = filepath.Dir(gomod)
	if s.Work, err = os.MkdirTemp("", cmd+"-"); err != nil {
		return s, err
	}
	logf("building berth and testapp (CGO_ENABLED=0)")
	s.BerthBin = filepath.Join(s.Work, "berth")
	if err := s.build(ctx, s.BerthBin, "."); err != nil {
		return s, err
	}
	testapp := filepath.Join(s.Work, "testapp")
	if image {
		if err := s.build(ctx, testapp, "./test/testapp"); err != nil {
			return s, err
		}
	}
	s.DockerHost = os.Getenv("DOCKER_HOST")
	if s.DockerHost == "" {
		s.DockerHost = "unix:///var/run/docker.sock"
	}
	dk, err := runtime.NewDocker(s.DockerHost)
	if err != nil {
		return s, err
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := dk.Ping(pctx); err != nil {
		dk.Close()
		return s, fmt.Errorf("the Docker engine is unreachable at %s: %w", s.DockerHost, err)
	}
	s.Docker, s.Client = dk, dk.Client()
	if image {
		logf("building image %s", TestImage)
		if err := dk.BuildImage(ctx, TestImage, testapp, "/testapp", []string{"/testapp"}); err != nil {
			return s, err
		}
	}
	return s, nil
}

// build runs `go build -o out pkg` in the module root with CGO_ENABLED=0.
func (s *Setup) build(ctx context.Context, out, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = s.Root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return nil
}
