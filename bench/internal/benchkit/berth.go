package benchkit

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// Berth is how a benchmark runs `berth run`: the settings it always gives,
// on top of its own environment without BERTH_ variables.
type Berth struct {
	Bin        string // the berth binary
	Node       string // BERTH_NODE_NAME
	RootDir    string // BERTH_ROOT_DIR
	PodsDir    string // BERTH_SOURCES_FILE_PATH
	Port       int    // BERTH_SERVER_PORT, on 127.0.0.1
	DockerHost string // BERTH_DOCKER_HOST
	// Env holds more KEY=VALUE settings; they win over those above.
	Env []string
}

// Start starts berth with cAdvisor off, in its own process group (a Ctrl-C
// reaches only the benchmark, which then stops berth and cleans up), its
// output going to log. Start owns log: it closes it once berth exited, or
// at once when berth did not start. It does not wait for readiness.
func (b Berth) Start(log *os.File) (*Proc, error) {
	cmd := exec.Command(b.Bin, "run")
	cmd.Env = append(BerthlessEnv(),
		"BERTH_NODE_NAME="+b.Node,
		"BERTH_ROOT_DIR="+b.RootDir,
		"BERTH_SOURCES_FILE_PATH="+b.PodsDir,
		"BERTH_SERVER_ADDRESS=127.0.0.1",
		"BERTH_SERVER_PORT="+strconv.Itoa(b.Port),
		"BERTH_CADVISOR_ENABLED=false",
		"BERTH_DOCKER_HOST="+b.DockerHost,
	)
	cmd.Env = append(cmd.Env, b.Env...) // later entries win
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start berth: %w", err)
	}
	p := &Proc{Port: b.Port, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return p, nil
}

// BerthlessEnv is this process's environment without BERTH_ variables, so
// that a berth it starts gets only the settings given to it.
func BerthlessEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BERTH_") {
			env = append(env, kv)
		}
	}
	return env
}
