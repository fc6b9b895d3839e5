package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSubPathSwapRace is the CVE-2017-1002101 attack on the real engine: a
// container of the pod exchanges a directory of a shared emptyDir with a
// symlink to a host directory (renameat2 RENAME_EXCHANGE, in a loop) while
// its sibling, which mounts that directory by subPath, is recreated again
// and again. A path checked by berth and resolved again by the engine at
// container start leaks the host directory into the sibling; a bind of
// the opened directory cannot. Bounded: 30 attempts or 40 s.
func TestSubPathSwapRace(t *testing.T) {
	const (
		maxAttempts = 30
		minAttempts = 10
		bound       = 40 * time.Second
	)
	b := startBerth(t, Options{Env: []string{"BERTH_BACKOFF_INITIAL=100ms", "BERTH_BACKOFF_MAX=200ms"}})
	secret := t.TempDir() // on the host, outside root_dir
	marker := "host-secret-" + randHex(4)
	if err := os.WriteFile(filepath.Join(secret, marker), []byte("must not be seen\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	results := t.TempDir()
	seen := filepath.Join(results, "seen")
	writeFile(t, b.Pods, "race.yaml", `apiVersion: v1
kind: Pod
metadata: {name: subpath-race}
spec:
  terminationGracePeriodSeconds: 1
  volumes:
    - {name: shared, emptyDir: {}}
    - {name: results, hostPath: {path: `+strconv.Quote(results)+`, type: Directory}}
  containers:
    - name: swapper
      image: `+testImage+`
      args: [swap, /vol, sub, link, `+strconv.Quote(secret)+`, 120s]
      volumeMounts: [{name: shared, mountPath: /vol}]
    - name: victim
      image: `+testImage+`
      args: [sees, /results/seen, /mnt, inside, `+marker+`]
      volumeMounts:
        - {name: shared, mountPath: /mnt, subPath: sub}
        - {name: results, mountPath: /results}
`)
	start := time.Now()
	var lines []string
	for time.Since(start) < bound {
		data, _ := os.ReadFile(seen)
		lines = strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(data) == 0 {
			lines = nil
		}
		if len(lines) >= maxAttempts {
			break
		}
		time.Sleep(pollEvery)
	}
	leaks, inside := 0, 0
	for _, l := range lines {
		if strings.Contains(l, marker+"=1") {
			leaks++
		}
		if strings.Contains(l, "inside=1") {
			inside++
		}
	}
	t.Logf("%d attempts of the subPath container in %s: %d saw the host directory, %d saw the volume's directory",
		len(lines), time.Since(start).Round(time.Millisecond), leaks, inside)
	if leaks > 0 {
		t.Fatalf("the subPath container saw the host directory %s in %d of %d attempts:\n%s",
			secret, leaks, len(lines), strings.Join(lines, "\n"))
	}
	if len(lines) < minAttempts || inside == 0 {
		t.Fatalf("only %d attempts (%d with the volume's directory) in %s, want at least %d: the race was not exercised",
			len(lines), inside, bound, minAttempts)
	}
	removeFile(t, b.Pods, "race.yaml")
	waitPodGone(t, b.Node, "subpath-race")
}
