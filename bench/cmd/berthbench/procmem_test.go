package main

import (
	"os"
	"strings"
	"testing"
)

// The bench's own memory cgroup and process memory, as the kernel reports
// them: the same reads the sandbox and footprint scenarios make.
func TestOwnMemory(t *testing.T) {
	m, err := readProcMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.rss <= 0 || m.anon <= 0 || m.anon > m.rss {
		t.Errorf("rss %d, anon %d", m.rss, m.anon)
	}
	cg, err := readCgroupMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cg.path, "/sys/fs/cgroup/") || cg.usage <= 0 {
		t.Errorf("cgroup %+v", cg)
	}
}

func TestKbField(t *testing.T) {
	status := "Name:\tx\nVmRSS:\t  2048 kB\nRssAnon:\t 512 kB\n"
	if kbField(status, "VmRSS") != 2048*1024 || kbField(status, "RssAnon") != 512*1024 || kbField(status, "Pss") != 0 {
		t.Error("kbField")
	}
	if argValue([]string{"shim", "-namespace", "moby", "-id", "abc"}, "-id") != "abc" || argValue([]string{"-id"}, "-id") != "" {
		t.Error("argValue")
	}
}
