package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/berth-dev/berth/pause"
)

func flags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestDefaults(t *testing.T) {
	c, err := Load(flags(t, "--node-name", "n1"))
	if err != nil {
		t.Fatal(err)
	}
	if c.RootDir != "/var/lib/berth" || c.FilePath != "/etc/berth/pods" || c.FileRescan != 20*time.Second ||
		c.Workers != 4 || c.Resync != time.Minute || c.BackoffInitial != 10*time.Second || c.BackoffMax != 300*time.Second ||
		c.ServerAddress != "127.0.0.1" || c.ServerPort != 10350 || c.PodInfraImage != DefaultPauseImage() ||
		c.EtcdPrefix != "/registry/hosts/n1/pods/" || c.EtcdLegacyKey != "/registry/hosts/n1/kubelet" || !c.CadvisorEnabled {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestPrecedenceFileEnvFlag(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "berth.yaml")
	if err := os.WriteFile(file, []byte("node_name: from-file\nbackoff:\n  initial: 1s\ncontroller:\n  workers: 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BERTH_BACKOFF_INITIAL", "250ms")
	c, err := Load(flags(t, "--config", file, "--port", "9999"))
	if err != nil {
		t.Fatal(err)
	}
	if c.NodeName != "from-file" || c.BackoffInitial != 250*time.Millisecond || c.Workers != 7 || c.ServerPort != 9999 {
		t.Fatalf("got node %q initial %v workers %d port %d", c.NodeName, c.BackoffInitial, c.Workers, c.ServerPort)
	}
}

func TestBadValuesNameTheKey(t *testing.T) {
	for env, want := range map[string]string{
		"BERTH_BACKOFF_INITIAL":               "backoff.initial",
		"BERTH_CONTROLLER_WORKERS":            "controller.workers",
		"BERTH_CONTROLLER_MAX_PARALLEL_STOPS": "controller.max_parallel_stops",
		"BERTH_SERVER_PORT":                   "server.port",
		"BERTH_LOG_LEVEL":                     "log.level",
		"BERTH_SOURCES_HTTP_URL":              "sources.http.url",
		"BERTH_ROOT_DIR":                      "root_dir",
		"BERTH_SOURCES_PUSH_ENABLED":          "sources.push.enabled",
	} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "bogus")
			_, err := Load(flags(t))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v does not name %s", err, want)
			}
		})
	}
}

func TestMissingConfigFile(t *testing.T) {
	_, err := Load(flags(t, "--config", "/nonexistent/berth.yaml"))
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/berth.yaml") {
		t.Fatalf("error %v", err)
	}
}

func TestEtcdEndpointsFromEnv(t *testing.T) {
	t.Setenv("BERTH_SOURCES_ETCD_ENDPOINTS", "http://127.0.0.1:2379, http://127.0.0.1:22379")
	c, err := Load(flags(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.EtcdEndpoints) != 2 || c.EtcdEndpoints[1] != "http://127.0.0.1:22379" {
		t.Fatalf("endpoints %q", c.EtcdEndpoints)
	}
}

// The push source is never anonymous: it needs sources.push.token_file or
// server.token_file.
func TestPushNeedsATokenFile(t *testing.T) {
	t.Setenv("BERTH_SOURCES_PUSH_ENABLED", "true")
	if _, err := Load(flags(t)); err == nil || !strings.Contains(err.Error(), "sources.push.token_file") {
		t.Fatalf("push without a token file: %v, want an error naming sources.push.token_file", err)
	}
	for _, env := range []string{"BERTH_SOURCES_PUSH_TOKEN_FILE", "BERTH_SERVER_TOKEN_FILE"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "/etc/berth/token")
			c, err := Load(flags(t))
			if err != nil || !c.PushEnabled {
				t.Fatalf("push with %s: %v", env, err)
			}
		})
	}
}

// An etcd password over plain http is refused unless
// sources.etcd.allow_insecure_auth says so; TLS needs no such consent.
func TestEtcdPasswordOverHTTPNeedsConsent(t *testing.T) {
	t.Setenv("BERTH_SOURCES_ETCD_ENDPOINTS", "http://127.0.0.1:2379")
	t.Setenv("BERTH_SOURCES_ETCD_USERNAME", "berth")
	t.Setenv("BERTH_SOURCES_ETCD_PASSWORD", "s3cret")
	_, err := Load(flags(t))
	if err == nil || !strings.Contains(err.Error(), "sources.etcd.username") || !strings.Contains(err.Error(), "sources.etcd.allow_insecure_auth") {
		t.Fatalf("password over http: %v, want an error naming the keys", err)
	}
	t.Run("allowed", func(t *testing.T) {
		t.Setenv("BERTH_SOURCES_ETCD_ALLOW_INSECURE_AUTH", "true")
		c, err := Load(flags(t))
		if err != nil || !c.EtcdClient().AllowInsecureAuth {
			t.Fatalf("allowed insecure auth: %v", err)
		}
	})
	t.Run("tls", func(t *testing.T) {
		t.Setenv("BERTH_SOURCES_ETCD_ENDPOINTS", "https://127.0.0.1:2379")
		t.Setenv("BERTH_SOURCES_ETCD_TLS_CA_FILE", "/etc/berth/etcd-ca.pem")
		if _, err := Load(flags(t)); err != nil {
			t.Fatalf("password over TLS: %v", err)
		}
	})
}

// The default pause image is tagged by its executable's digest.
func TestDefaultPauseImageIsContentTagged(t *testing.T) {
	b, err := pause.Default()
	if err != nil {
		t.Skipf("this berth cannot build its pause image: %v", err)
	}
	want := "berth/pause:" + b.Digest[:16]
	if got := DefaultPauseImage(); got != want {
		t.Errorf("DefaultPauseImage() = %q, want %q", got, want)
	}
}

func TestEtcdEventsKey(t *testing.T) {
	c, err := Load(flags(t, "--node-name", "n1"))
	if err != nil {
		t.Fatal(err)
	}
	if !c.EtcdEvents {
		t.Error("sources.etcd.events is off by default, want on (the seed kubelet wrote its events to etcd)")
	}
	t.Setenv("BERTH_SOURCES_ETCD_EVENTS", "false")
	if c, err = Load(flags(t, "--node-name", "n1")); err != nil || c.EtcdEvents {
		t.Errorf("sources.etcd.events false: events %v, err %v", c.EtcdEvents, err)
	}
	t.Setenv("BERTH_SOURCES_ETCD_EVENTS", "sometimes")
	if _, err := Load(flags(t, "--node-name", "n1")); err == nil || !strings.Contains(err.Error(), "sources.etcd.events") {
		t.Errorf("a bad value: error %v does not name sources.etcd.events", err)
	}
}

// BERTH_SERVER is the client commands' server URL: it must not hide the
// agent's server.* keys, which viper would otherwise see as shadowed.
func TestClientServerVariableDoesNotHideServerKeys(t *testing.T) {
	file := filepath.Join(t.TempDir(), "berth.yaml")
	if err := os.WriteFile(file, []byte("server:\n  port: 12345\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BERTH_SERVER", "http://127.0.0.1:1")
	t.Setenv("BERTH_SERVER_ADDRESS", "127.0.0.2")
	c, err := Load(flags(t, "--config", file, "--node-name", "n1"))
	if err != nil {
		t.Fatal(err)
	}
	if c.ServerPort != 12345 || c.ServerAddress != "127.0.0.2" {
		t.Fatalf("with BERTH_SERVER set: port %d address %q, want 12345 127.0.0.2", c.ServerPort, c.ServerAddress)
	}
}
