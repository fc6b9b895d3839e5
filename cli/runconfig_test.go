package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/berth-dev/berth/config"
)

// TestRunFindsItsConfigAsTheClientsDo: berth run reads --config, else
// $BERTH_CONFIG, else /etc/berth/config.yaml when it exists, as the client
// commands do; its --help says so.
func TestRunFindsItsConfigAsTheClientsDo(t *testing.T) {
	isolate(t)
	file := func(node string) string {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte("node_name: "+node+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	node := func(args ...string) string {
		t.Helper()
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		config.BindFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		cfg, err := loadRunConfig(fs)
		if err != nil {
			t.Fatal(err)
		}
		return cfg.NodeName
	}
	host, _ := os.Hostname()
	if got := node(); got != strings.ToLower(host) {
		t.Errorf("no file anywhere: node %q, want the host name %q", got, host)
	}
	defaultConfigFile = file("from-default")
	if got := node(); got != "from-default" {
		t.Errorf("%s exists: node %q, want from-default", defaultConfigFile, got)
	}
	t.Setenv(envConfig, file("from-env"))
	if got := node(); got != "from-env" {
		t.Errorf("$%s: node %q, want from-env", envConfig, got)
	}
	if got := node("--config", file("from-flag")); got != "from-flag" {
		t.Errorf("--config: node %q, want from-flag", got)
	}

	out, _, err := execute(runCmd(), "--help")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "default: $BERTH_CONFIG, else "+defaultConfigFile+" if it exists") {
		t.Errorf("berth run --help does not name the config file's precedence:\n%s", out)
	}
}
