package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// otherUID owns the symlinks another user would plant.
const otherUID = 65534 // nobody

// plantLink makes dir/name a symlink to target owned by uid, as that user
// would have made it (needs root).
func plantLink(t *testing.T, dir, name, target string, uid int) string {
	t.Helper()
	link := filepath.Join(dir, name)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, uid, uid); err != nil {
		t.Fatal(err)
	}
	return link
}

// TestKubeconfigRefusesAnotherUsersSymlink is the attack of a local user
// on root running `berth kubeconfig -o /tmp/x`: a symlink planted at
// /tmp/x (or in a directory of the path) pointing at a file of root's must
// not have that file replaced. berth follows only symlinks of the caller
// or of root, with an error naming the link and its owner; the target is
// untouched.
func TestKubeconfigRefusesAnotherUsersSymlink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to plant a symlink owned by another user")
	}
	isolate(t)
	a := newCLIAPI(t)
	t.Setenv(envConfig, agentConfig(t, "node-s", a.url, a.tokenFile))

	victimDir := t.TempDir()
	victim := filepath.Join(victimDir, "shadow")
	if err := os.WriteFile(victim, []byte("root:precious\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	if err := os.Chmod(tmp, 0o1777); err != nil { // as /tmp
		t.Fatal(err)
	}
	other := t.TempDir() // a directory of the other user's
	if err := os.Chown(other, otherUID, otherUID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, out string }{
		{"in a sticky world-writable directory", plantLink(t, tmp, "x", victim, otherUID)},
		{"in the other user's directory", plantLink(t, other, "x", victim, otherUID)},
		{"as a directory of the path", filepath.Join(plantLink(t, tmp, "d", victimDir, otherUID), "shadow")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCLI(t, "kubeconfig", "--embed-token", "-o", tc.out)
			if err == nil || !strings.Contains(err.Error(), "symlink") || !strings.Contains(err.Error(), "65534") {
				t.Errorf("-o %s: error %v, want a refusal naming the symlink's owner", tc.out, err)
			}
			if b, _ := os.ReadFile(victim); string(b) != "root:precious\n" {
				t.Fatalf("the symlink's target was replaced: %q", b)
			}
		})
	}

	// The caller's own symlink, and root's, are followed.
	mine := filepath.Join(t.TempDir(), "mine")
	if err := os.WriteFile(mine, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := plantLink(t, tmp, "mine", mine, os.Geteuid())
	if _, _, err := runCLI(t, "kubeconfig", "--embed-token", "-o", link); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(mine); !strings.Contains(string(b), "node-s") {
		t.Fatalf("-o through the caller's own symlink: target %q", b)
	}
}
