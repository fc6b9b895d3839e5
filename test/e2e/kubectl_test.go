package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
)

// The real kubectl (k8s.io/kubectl v0.37.2, module test/kubectl) is built
// once per test binary run, by the first test that needs it, next to the
// berth binary (TestMain removes that directory).
var (
	kubectlOnce sync.Once
	kubectlPath string
	kubectlErr  error
)

// kubectlBuildTimeout bounds the build: the first one downloads the
// k8s.io modules and compiles kubectl, minutes on two cores.
const kubectlBuildTimeout = 15 * time.Minute

// kubectlBinary returns the path of the built kubectl, building it first.
func kubectlBinary(t *testing.T) string {
	t.Helper()
	need(t)
	kubectlOnce.Do(func() {
		root, err := testutil.ModuleDir()
		if err != nil {
			kubectlErr = err
			return
		}
		out := filepath.Join(filepath.Dir(berthBin), "kubectl")
		ctx, cancel := context.WithTimeout(context.Background(), kubectlBuildTimeout)
		defer cancel()
		start := time.Now()
		cmd := exec.CommandContext(ctx, "go", "build", "-C", filepath.Join(root, "test", "kubectl"),
			"-ldflags", "-X k8s.io/component-base/version.gitVersion=v1.37.2 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37",
			"-o", out, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			kubectlErr = fmt.Errorf("%v after %s\n%s", err, time.Since(start).Round(time.Second), b)
			return
		}
		kubectlPath = out
		if testing.Verbose() {
			fmt.Fprintf(os.Stderr, "e2e: built kubectl in %s\n", time.Since(start).Round(time.Millisecond))
		}
	})
	if kubectlErr != nil {
		t.Fatalf("building the real kubectl failed (go build -C test/kubectl: its module needs k8s.io/kubectl v0.37.2 "+
			"from the module proxy or the module cache): %v", kubectlErr)
	}
	return kubectlPath
}

// kubectlEnv is a berth serving https with an admin token (kubectl sends
// no token over http), and a kubeconfig for it written by berth kubeconfig.
type kubectlEnv struct {
	b          *Berth
	bin        string
	tokenFile  string
	kubeconfig string
	home       string // kubectl's $HOME: its discovery cache
}

// startKubectlEnv builds kubectl, starts berth with env added to its
// environment, and writes the kubeconfig.
func startKubectlEnv(t *testing.T, env ...string) *kubectlEnv {
	t.Helper()
	bin := kubectlBinary(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("e2e-"+randHex(8)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startBerth(t, Options{TLS: true, Env: append([]string{"BERTH_SERVER_TOKEN_FILE=" + tokenFile}, env...)})
	k := &kubectlEnv{b: b, bin: bin, tokenFile: tokenFile, home: t.TempDir()}
	k.kubeconfig = k.writeKubeconfig(t, tokenFile)
	return k
}

// writeKubeconfig runs `berth kubeconfig -o FILE --token-file tokenFile`
// with the agent's own environment, as an operator on the node would, and
// returns FILE.
func (k *kubectlEnv) writeKubeconfig(t *testing.T, tokenFile string) string {
	t.Helper()
	u, err := url.Parse(k.b.URL(""))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cmd := exec.Command(berthBin, "kubeconfig", "--token-file", tokenFile, "-o", path)
	cmd.Env = append(berthlessEnv(),
		"HOME="+k.home,
		"BERTH_NODE_NAME="+k.b.Node,
		"BERTH_ROOT_DIR="+k.b.Root,
		"BERTH_SOURCES_FILE_PATH="+k.b.Pods,
		"BERTH_SERVER_ADDRESS=127.0.0.1",
		"BERTH_SERVER_PORT="+u.Port(),
	)
	cmd.Env = append(cmd.Env, k.b.env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("berth kubeconfig: %v\n%s", err, out)
	}
	return path
}

// kubectlRun is a finished kubectl.
type kubectlRun struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r kubectlRun) String() string {
	return fmt.Sprintf("kubectl %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// command is kubectl args with k's kubeconfig and an isolated $HOME.
func (k *kubectlEnv) command(ctx context.Context, kubeconfig string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, k.bin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	for _, kv := range berthlessEnv() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "HOME=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HOME="+k.home)
	return cmd
}

// run runs kubectl to its end (30 s at most) with stdin ("" none).
func (k *kubectlEnv) run(t *testing.T, stdin string, args ...string) kubectlRun {
	t.Helper()
	return k.runWith(t, k.kubeconfig, stdin, args...)
}

func (k *kubectlEnv) runWith(t *testing.T, kubeconfig, stdin string, args ...string) kubectlRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := k.command(ctx, kubeconfig, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("kubectl %v: %v", args, err)
	}
	r := kubectlRun{args, out.String(), errOut.String(), cmd.ProcessState.ExitCode()}
	if ctx.Err() != nil {
		t.Fatalf("did not end within 30s: %s", r)
	}
	return r
}

// ok runs kubectl and fails the test unless it exits 0.
func (k *kubectlEnv) ok(t *testing.T, args ...string) kubectlRun {
	t.Helper()
	r := k.run(t, "", args...)
	if r.code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	return r
}

// eventually runs kubectl args until check passes on a 0 exit, failing
// the test after waitLong with the last run.
func (k *kubectlEnv) eventually(t *testing.T, what string, check func(r kubectlRun) bool, args ...string) kubectlRun {
	t.Helper()
	var r kubectlRun
	waitFor(t, waitLong, what, func() (bool, string) {
		r = k.run(t, "", args...)
		return r.code == 0 && check(r), r.String()
	})
	return r
}

// start runs kubectl left running (get -w, logs -f, port-forward).
func (k *kubectlEnv) start(t *testing.T, args ...string) *lineStream {
	t.Helper()
	return startLineStream(t, "kubectl", k.command(context.Background(), k.kubeconfig, args...))
}

// table splits kubectl's printed table into rows of fields (a header
// such as "NOMINATED NODE" gives two fields).
func table(out string) [][]string {
	var rows [][]string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if strings.TrimSpace(l) != "" {
			rows = append(rows, strings.Fields(l))
		}
	}
	return rows
}

// ageRE is kubectl's human age (5s, 2m3s, 10m, 3h, 2d5h).
var ageRE = regexp.MustCompile(`^[0-9]+[smhdy]([0-9]+[smh])?$`)

// wantRow checks that row is want, where "<age>" matches any age and
// "<any>" anything.
func wantRow(t *testing.T, what string, row, want []string) {
	t.Helper()
	if len(row) != len(want) {
		t.Errorf("%s: row %q, want %q", what, row, want)
		return
	}
	for i := range want {
		switch want[i] {
		case "<any>":
		case "<age>":
			if !ageRE.MatchString(row[i]) {
				t.Errorf("%s: column %d %q is not an age; row %q", what, i, row[i], row)
			}
		default:
			if row[i] != want[i] {
				t.Errorf("%s: row %q, want %q", what, row, want)
				return
			}
		}
	}
}

// rowOf returns the row of rows whose column col is name.
func rowOf(rows [][]string, col int, name string) []string {
	for _, r := range rows {
		if len(r) > col && r[col] == name {
			return r
		}
	}
	return nil
}

// head is the first row of rows (nil for none).
func head(rows [][]string) []string {
	if len(rows) == 0 {
		return nil
	}
	return rows[0]
}

// manifestDir is a temporary directory of t and a function that writes a
// manifest into it, returning the file's path.
func manifestDir(t *testing.T) (string, func(name, content string) string) {
	dir := t.TempDir()
	return dir, func(name, content string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
}
