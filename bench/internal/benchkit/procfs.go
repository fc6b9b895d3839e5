package benchkit

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// ProcField returns the value of the first "key: value" line of a /proc
// file such as /proc/cpuinfo ("" when the file or the key is missing).
func ProcField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Loadavg is the 1, 5 and 15 minute load average ("?" when unreadable).
func Loadavg() string {
	f := strings.Fields(readTrim("/proc/loadavg"))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// CPUTicks returns utime+stime of pid in clock ticks (see ClkTck).
func CPUTicks(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return utime + stime, nil
}

// ClkTck is the kernel's USER_HZ (getconf CLK_TCK), 100 when getconf
// fails, as on Linux x86.
func ClkTck() int {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && n > 0 {
			return n
		}
	}
	return 100
}

// readTrim is the file's content without surrounding space ("" when
// unreadable).
func readTrim(path string) string {
	data, _ := os.ReadFile(path)
	return strings.TrimSpace(string(data))
}
