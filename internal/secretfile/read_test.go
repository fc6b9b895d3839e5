package secretfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTokensRefusesFilesOthersCanAccess(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		mode os.FileMode
		want string // "" = accepted
	}{
		{0o600, ""},
		{0o400, ""},
		{0o644, "has mode 0644; it must not be readable or writable by group or others (chmod 600)"},
		{0o640, "has mode 0640"},
		{0o604, "has mode 0604"},
		{0o620, "has mode 0620"},
	} {
		path := filepath.Join(dir, "token-"+tc.mode.String())
		if err := os.WriteFile(path, []byte("\n  tok1 \n\ntok2\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tc.mode); err != nil {
			t.Fatal(err)
		}
		toks, err := Tokens("server.token_file", path)
		if tc.want == "" {
			if err != nil || strings.Join(toks, ",") != "tok1,tok2" {
				t.Errorf("mode %04o: %v %v", tc.mode, toks, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "server.token_file: "+path+" "+tc.want) {
			t.Errorf("mode %04o: %v, want an error %q", tc.mode, err, tc.want)
		}
	}
	empty := filepath.Join(dir, "empty")
	_ = os.WriteFile(empty, []byte("\n \n"), 0o600)
	if _, err := Tokens("sources.push.token_file", empty); err == nil || !strings.Contains(err.Error(), "sources.push.token_file: no token") {
		t.Errorf("empty file: %v", err)
	}
	if _, err := Tokens("sources.push.token_file", dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
}
