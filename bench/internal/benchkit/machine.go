package benchkit

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/client"
)

// Machine is the host, engine and checkout a benchmark ran on, as its
// report's header names them.
type Machine struct {
	Date, Kernel, CPU, Mem, Docker, GoVersion string
	// Commit is the checkout's short hash, with " + uncommitted changes"
	// when the tree is dirty ("" outside git).
	Commit    string
	LoadStart string // Loadavg when read
	NProc     int
	// OthersRunning counts the engine's running containers when read:
	// other work on a shared machine.
	OthersRunning int
}

// ReadMachine reads the machine from /proc, the engine's info (Docker and
// OthersRunning stay empty when it fails) and git in root.
func ReadMachine(ctx context.Context, cli *client.Client, root string) Machine {
	m := Machine{
		Date:      time.Now().UTC().Format("2006-01-02 15:04 MST"),
		NProc:     goruntime.NumCPU(),
		GoVersion: goruntime.Version(),
		LoadStart: Loadavg(),
		Kernel:    readTrim("/proc/sys/kernel/osrelease"),
		CPU:       ProcField("/proc/cpuinfo", "model name"),
	}
	if kb, err := strconv.ParseFloat(strings.Fields(ProcField("/proc/meminfo", "MemTotal") + " 0")[0], 64); err == nil {
		m.Mem = fmt.Sprintf("%.1f GiB", kb/(1<<20))
	}
	if info, err := cli.Info(ctx); err == nil {
		m.Docker = fmt.Sprintf("%s (API %s), storage %s, cgroup v%s %s", info.ServerVersion, cli.ClientVersion(),
			info.Driver, info.CgroupVersion, info.CgroupDriver)
		m.OthersRunning = info.ContainersRunning
	}
	if out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
		if st, err := exec.CommandContext(ctx, "git", "-C", root, "status", "--porcelain").Output(); err == nil && len(st) > 0 {
			m.Commit += " + uncommitted changes"
		}
	}
	return m
}

// Slug names the machine in result file names: "<nproc>cpu-<model>", e.g.
// 2cpu-amd-epyc.
func (m Machine) Slug() string {
	model := strings.ToLower(m.CPU)
	model = regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(model, "-")
	return strings.Trim(fmt.Sprintf("%dcpu-%s", m.NProc, model), "-")
}

// ResultFile is dir/<name>-<commit7>-<slug>.csv, the commit marked -dirty
// for an uncommitted tree: one file per scenario, commit and machine.
func (m Machine) ResultFile(dir, name string) string {
	commit, _, _ := strings.Cut(m.Commit, " ")
	if len(commit) > 7 {
		commit = commit[:7]
	}
	if strings.Contains(m.Commit, "uncommitted") {
		commit += "-dirty"
	}
	return filepath.Join(dir, fmt.Sprintf("%s-%s-%s.csv", name, commit, m.Slug()))
}
