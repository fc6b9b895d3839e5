package main

// Memory as the kernel accounts it: a container's memory cgroup (found
// through /proc/<pid>/cgroup of its init process, so any cgroup driver and
// version), and a process's RSS, anonymous RSS and PSS.

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procMem is one process's memory, in bytes.
type procMem struct {
	pid            int
	rss, anon, pss int64
}

// readProcMem reads VmRSS and RssAnon from /proc/<pid>/status and Pss from
// /proc/<pid>/smaps_rollup (0 where the kernel lacks it).
func readProcMem(pid int) (procMem, error) {
	m := procMem{pid: pid}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m, err
	}
	m.rss = kbField(string(status), "VmRSS")
	m.anon = kbField(string(status), "RssAnon")
	if rollup, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid)); err == nil {
		m.pss = kbField(string(rollup), "Pss")
	}
	return m, nil
}

// kbField returns the "<key>: <n> kB" line's value in bytes.
func kbField(text, key string) int64 {
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k != key {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			return 0
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		return n * 1024
	}
	return 0
}

// cgroupMem is a container's memory cgroup: usage is memory.usage_in_bytes
// (v1) or memory.current (v2); anon and file are its memory.stat
// breakdown (v1 total_rss and total_cache, v2 anon and file).
type cgroupMem struct {
	path              string
	usage, anon, file int64
}

// readCgroupMem reads the memory cgroup of process pid.
func readCgroupMem(pid int) (cgroupMem, error) {
	dir, v2, err := memoryCgroupDir(pid)
	if err != nil {
		return cgroupMem{}, err
	}
	m := cgroupMem{path: dir}
	usageFile, anonKey, fileKey := "memory.usage_in_bytes", "total_rss", "total_cache"
	if v2 {
		usageFile, anonKey, fileKey = "memory.current", "anon", "file"
	}
	data, err := os.ReadFile(filepath.Join(dir, usageFile))
	if err != nil {
		return m, err
	}
	if m.usage, err = strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err != nil {
		return m, fmt.Errorf("%s/%s: %w", dir, usageFile, err)
	}
	stat, err := os.ReadFile(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return m, err
	}
	for _, line := range strings.Split(string(stat), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case anonKey:
			m.anon = n
		case fileKey:
			m.file = n
		}
	}
	return m, nil
}

// memoryCgroupDir is the directory of pid's memory cgroup: on cgroup v1 the
// "memory" controller's line of /proc/<pid>/cgroup under
// /sys/fs/cgroup/memory (cgroupfs driver: docker/<id>; systemd:
// system.slice/docker-<id>.scope), on v2 the unified line under
// /sys/fs/cgroup.
func memoryCgroupDir(pid int) (dir string, v2 bool, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	var unified string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" {
				return filepath.Join("/sys/fs/cgroup/memory", parts[2]), false, nil
			}
		}
	}
	if unified != "" {
		return filepath.Join("/sys/fs/cgroup", unified), true, nil
	}
	return "", false, fmt.Errorf("/proc/%d/cgroup: no memory cgroup", pid)
}

// process is one entry of /proc: its pid, parent, name and arguments.
type process struct {
	pid, ppid int
	comm      string
	args      []string
}

// processes lists the processes of the host.
func processes() ([]process, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []process
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || len(cmdline) == 0 {
			continue // gone, or a kernel thread
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(stat)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		rest := strings.Fields(s[close+1:])
		if len(rest) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(rest[1])
		out = append(out, process{pid: pid, ppid: ppid, comm: s[open+1 : close],
			args: strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")})
	}
	return out, nil
}

// argValue returns the value following flag in args ("" if absent).
func argValue(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}
