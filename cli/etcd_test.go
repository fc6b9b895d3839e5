package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/berth-dev/berth/internal/testutil"
)

// etcdConfigOf parses args as the cluster commands' etcd flags.
func etcdConfigOf(t *testing.T, args ...string) *etcdFlags {
	t.Helper()
	var f etcdFlags
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	f.addFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &f
}

func secretFile(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// The etcd password never comes from argv, where every user of the host
// reads it (ps, /proc/<pid>/cmdline): --etcd-user NAME:PASSWORD is refused.
func TestEtcdPasswordNotFromArgv(t *testing.T) {
	f := etcdConfigOf(t, "--etcd-endpoints", "https://127.0.0.1:2379", "--etcd-cacert", "ca.pem", "--etcd-user", "berth:s3cret")
	_, err := f.config()
	if err == nil || !strings.Contains(err.Error(), "--etcd-password-file") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("--etcd-user with a password: %v, want a refusal pointing to --etcd-password-file", err)
	}
}

func TestEtcdPasswordFromFileOrEnv(t *testing.T) {
	tls := []string{"--etcd-endpoints", "https://127.0.0.1:2379", "--etcd-cacert", "ca.pem", "--etcd-user", "berth"}
	file := secretFile(t, "s3cret\n", 0o600)
	f := etcdConfigOf(t, append(tls, "--etcd-password-file", file)...)
	if c, err := f.config(); err != nil || c.Username != "berth" || c.Password != "s3cret" {
		t.Fatalf("--etcd-password-file: %q %q %v", c.Username, c.Password, err)
	}

	t.Setenv("BERTH_SOURCES_ETCD_PASSWORD_FILE", file)
	f = etcdConfigOf(t, tls...)
	if c, err := f.config(); err != nil || c.Password != "s3cret" {
		t.Fatalf("$BERTH_SOURCES_ETCD_PASSWORD_FILE: %q %v", c.Password, err)
	}
	t.Setenv("BERTH_SOURCES_ETCD_PASSWORD_FILE", "")

	t.Setenv("BERTH_SOURCES_ETCD_PASSWORD", "fromenv")
	f = etcdConfigOf(t, tls...)
	if c, err := f.config(); err != nil || c.Password != "fromenv" {
		t.Fatalf("$BERTH_SOURCES_ETCD_PASSWORD: %q %v", c.Password, err)
	}

	open := secretFile(t, "s3cret\n", 0o644)
	f = etcdConfigOf(t, append(tls, "--etcd-password-file", open)...)
	if _, err := f.config(); err == nil || !strings.Contains(err.Error(), "--etcd-password-file: "+open+" has mode 0644") {
		t.Fatalf("a 0644 password file: %v", err)
	}
}

// An etcd password over plain http needs --etcd-allow-insecure-auth (or
// its variable).
func TestEtcdInsecureAuthNeedsConsent(t *testing.T) {
	t.Setenv("BERTH_SOURCES_ETCD_PASSWORD", "s3cret")
	plain := []string{"--etcd-endpoints", "http://127.0.0.1:2379", "--etcd-user", "berth"}
	f := etcdConfigOf(t, plain...)
	if _, err := f.config(); err == nil || !strings.Contains(err.Error(), "--etcd-user: the etcd password would cross plain http") ||
		!strings.Contains(err.Error(), "--etcd-allow-insecure-auth") || !strings.Contains(err.Error(), "--etcd-cacert") {
		t.Fatalf("password over http: %v", err)
	}
	f = etcdConfigOf(t, append(plain, "--etcd-allow-insecure-auth")...)
	if c, err := f.config(); err != nil || !c.AllowInsecureAuth {
		t.Fatalf("--etcd-allow-insecure-auth: %v", err)
	}
	t.Setenv("BERTH_SOURCES_ETCD_ALLOW_INSECURE_AUTH", "true")
	f = etcdConfigOf(t, plain...)
	if c, err := f.config(); err != nil || !c.AllowInsecureAuth {
		t.Fatalf("$BERTH_SOURCES_ETCD_ALLOW_INSECURE_AUTH: %v", err)
	}
}

// The password file reaches a real etcd that demands it (over TLS).
func TestClusterCommandsWithPasswordFile(t *testing.T) {
	ca := testutil.NewTestCA(t, t.TempDir())
	e := testutil.StartEtcdTLS(t, ca)
	testutil.EnableAuth(t, e.TLSClient(ca, "", ""), "berth", "s3cret")
	args := []string{"nodes", "--etcd-endpoints", e.ClientURL, "--etcd-cacert", ca.CAFile, "--etcd-cert", ca.ClientCert,
		"--etcd-key", ca.ClientKey, "--etcd-user", "berth", "--etcd-timeout", "5s"}
	if _, _, err := execute(getCmd(), append(args, "--etcd-password-file", secretFile(t, "s3cret\n", 0o600))...); err != nil {
		t.Fatalf("get nodes with the password file: %v", err)
	}
	if _, _, err := execute(getCmd(), append(args, "--etcd-password-file", secretFile(t, "wrong\n", 0o600))...); err == nil {
		t.Fatal("get nodes with a wrong password succeeded")
	}
}
