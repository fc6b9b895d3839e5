package agent

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOSImage(t *testing.T) {
	p := filepath.Join(t.TempDir(), "os-release")
	if err := os.WriteFile(p, []byte("NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\nID=debian\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := osImage(p); got != "Debian GNU/Linux 13 (trixie)" {
		t.Fatalf("osImage %q", got)
	}
	if got := osImage(filepath.Join(t.TempDir(), "none")); got != "" {
		t.Fatalf("missing file: %q", got)
	}
}
