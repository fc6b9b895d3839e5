package e2e

import (
	"testing"
	"time"
)

// TestTwoBerthsShareOneEngine: two agents (different node names) with a pod
// of the same name on the same engine both run it, and neither touches the
// other's containers.
func TestTwoBerthsShareOneEngine(t *testing.T) {
	a := startBerth(t, Options{})
	b := startBerth(t, Options{})
	writeFile(t, a.Pods, "same.yaml", sleeper("same"))
	writeFile(t, b.Pods, "same.yaml", sleeper("same"))
	waitPodRunning(t, a.Node, "same", "app")
	idsB := waitPodRunning(t, b.Node, "same", "app")
	removeFile(t, a.Pods, "same.yaml")
	waitPodGone(t, a.Node, "same")
	assertStable(t, b.Node, "same", idsB, 2*time.Second)
}
