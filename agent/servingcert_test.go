package agent

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/config"
)

func TestServingCert(t *testing.T) {
	root := t.TempDir()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	cfg := &config.Config{NodeName: "node-a", RootDir: root, ServerAddress: "127.0.0.1", TLSSelfSigned: true}
	cert, key, err := servingCert(cfg, clock.RealClock{}, log)
	if err != nil {
		t.Fatal(err)
	}
	if cert != filepath.Join(root, "pki", "berth-serving.crt") || key != filepath.Join(root, "pki", "berth-serving.key") {
		t.Fatalf("pair %s %s", cert, key)
	}
	if !strings.Contains(logs.String(), `msg="generated a self-signed serving certificate; clients trust it through berth kubeconfig"`) ||
		!strings.Contains(logs.String(), `why="no berth-serving.crt yet"`) {
		t.Errorf("log: %s", logs.String())
	}
	first, _ := os.ReadFile(cert)
	logs.Reset()
	if _, _, err := servingCert(cfg, clock.RealClock{}, log); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(cert); !bytes.Equal(first, again) || logs.Len() != 0 {
		t.Errorf("a second start did not reuse the certificate quietly: %s", logs.String())
	}

	// Given a certificate, berth serves it and writes nothing.
	other := t.TempDir()
	given := &config.Config{NodeName: "node-a", RootDir: other, TLSCertFile: "/etc/berth/tls.crt", TLSKeyFile: "/etc/berth/tls.key"}
	if cert, key, err := servingCert(given, clock.RealClock{}, log); err != nil || cert != given.TLSCertFile || key != given.TLSKeyFile {
		t.Errorf("cert_file: %s %s %v", cert, key, err)
	}
	if _, err := os.Stat(filepath.Join(other, "pki")); !os.IsNotExist(err) {
		t.Errorf("root_dir/pki made without self_signed: %v", err)
	}
}
