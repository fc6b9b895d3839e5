package e2e

import (
	"testing"
)

// TestContainerLogRotation: every container berth creates, the sandbox
// included, logs to the engine's json-file driver rotated as
// container_log_max_size and container_log_max_files say.
func TestContainerLogRotation(t *testing.T) {
	b := startBerth(t, Options{Env: []string{"BERTH_CONTAINER_LOG_MAX_SIZE=2Mi", "BERTH_CONTAINER_LOG_MAX_FILES=3"}})
	writeFile(t, b.Pods, "rotated.yaml", sleeper("rotated"))
	ids := waitPodRunning(t, b.Node, "rotated", "app")
	for name, id := range ids {
		lc := inspect(t, id).HostConfig.LogConfig
		if lc.Type != "json-file" || lc.Config["max-size"] != "2m" || lc.Config["max-file"] != "3" {
			t.Errorf("%s: log config %+v, want json-file with max-size 2m, max-file 3", name, lc)
		}
	}
}
