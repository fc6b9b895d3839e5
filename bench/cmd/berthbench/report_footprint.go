package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// sandboxGoal is the largest mean memory cgroup usage of a sandbox.
const sandboxGoal = 1 << 20

func (fr *footprintResults) goals() []goal {
	var gs []goal
	g := goal{name: fmt.Sprintf("Sandbox memory with %d idle pods", fr.pods), target: "mean memory cgroup usage of the sandbox containers ≤ 1 MiB", verdict: notMeasured}
	if bs := fr.system(sysBerth); bs != nil && len(bs.sandboxes) > 0 {
		mean := meanOf(bs.sandboxes, func(c containerMem) int64 { return c.cg.usage })
		g.measured = fmt.Sprintf("%.3f MiB (%s; its process's RSS %.3f MiB)", mib(mean), fr.pauseImage,
			mib(meanOf(bs.sandboxes, func(c containerMem) int64 { return c.proc.rss })))
		g.verdict = verdict(mean <= sandboxGoal)
	}
	gs = append(gs, g)
	g = goal{name: fmt.Sprintf("Node footprint per pod, %d idle pods", fr.pods), target: "reported: berth, its sandboxes, shims and docker-proxy, engine growth, next to docker-compose", verdict: notMeasured}
	var parts []string
	for _, s := range fr.systems {
		parts = append(parts, fmt.Sprintf("%s %.2f MiB/pod by RSS, %.2f by PSS", s.system, mib(s.perPod(s.total(false))), mib(s.perPod(s.total(true)))))
	}
	if len(parts) > 0 {
		g.measured, g.verdict = strings.Join(parts, ", ")+" (apps excluded; section 3c)", "reported"
	}
	return append(gs, g)
}

// perPod divides bytes by the pods.
func (s *footprintSys) perPod(bytes int64) float64 {
	if len(s.sandboxes) == 0 {
		return 0
	}
	return float64(bytes) / float64(len(s.sandboxes))
}

func rssOf(p procMem) int64 { return p.rss }
func pssOf(p procMem) int64 { return p.pss }

// parts are the node's memory for the pods, by part, apps excluded: the
// agent's RSS, the sandboxes' cgroup usage, shims' and proxies' RSS (PSS
// beside), the engine's RSS growth.
func (s *footprintSys) parts() []footprintPart {
	return []footprintPart{
		{"agent process (berth: VmRSS; compose: none stays running)", s.agent.rss, s.agent.pss, 1},
		{"sandboxes (memory cgroup usage)", int64(meanOf(s.sandboxes, func(c containerMem) int64 { return c.cg.usage }) * float64(len(s.sandboxes))), -1, len(s.sandboxes)},
		{"containerd-shim, one per container (VmRSS)", sumProc(s.shims, rssOf), sumProc(s.shims, pssOf), len(s.shims)},
		{"docker-proxy, per published port and address family (VmRSS)", sumProc(s.proxies, rssOf), sumProc(s.proxies, pssOf), len(s.proxies)},
		{"dockerd's VmRSS growth", s.dockerd1.rss - s.dockerd0.rss, s.dockerd1.pss - s.dockerd0.pss, 1},
		{"containerd's VmRSS growth", s.containerd1.rss - s.containerd0.rss, s.containerd1.pss - s.containerd0.pss, 1},
	}
}

type footprintPart struct {
	name     string
	rss, pss int64 // pss -1: not a process figure
	count    int
}

// total sums the parts by RSS, or by PSS where the part is a process
// (the sandboxes count their cgroup usage either way).
func (s *footprintSys) total(pss bool) int64 {
	var t int64
	for _, p := range s.parts() {
		if pss && p.pss >= 0 {
			t += p.pss
		} else {
			t += p.rss
		}
	}
	return t
}

func (r *results) sandboxSection(s *strings.Builder) {
	p := func(format string, args ...interface{}) { fmt.Fprintf(s, format, args...) }
	fr := r.footprint
	p("## 3b. Sandbox memory\n\n")
	p("%d idle pods (the start scenario's pod: one `testapp sleep` app with a hostPort) run by a fresh berth with default settings, measured %s after the last container started. "+
		"For every container the bench reads its memory cgroup, found through `/proc/<pid>/cgroup` of its init process (cgroup v1: `memory.usage_in_bytes` and `memory.stat` total_rss / total_cache; v2: `memory.current`, anon / file), and the init process's `VmRSS`, `RssAnon` (`/proc/<pid>/status`) and `Pss` (`/proc/<pid>/smaps_rollup`). "+
		"The pause image is `%s` (%s). The same pods run by docker-compose (the sandbox service on the same image) are beside them.\n\n", fr.pods, fr.settle, fr.pauseImage, sizeStr(fr.pauseSize))
	p("| containers | count | cgroup usage, mean | of it anon | of it page cache | the rest (kernel) | init VmRSS, mean | RssAnon | Pss |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, sys := range fr.systems {
		for _, set := range []struct {
			name string
			cs   []containerMem
		}{{"sandboxes", sys.sandboxes}, {"app containers", sys.apps}} {
			if len(set.cs) == 0 {
				continue
			}
			m := func(f func(containerMem) int64) string { return fmt.Sprintf("%.3f MiB", mib(meanOf(set.cs, f))) }
			name := sys.system + ": " + set.name
			if sys.system == sysBerth && set.name == "sandboxes" {
				name = "**" + name + "**"
			}
			p("| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", name, len(set.cs),
				m(func(c containerMem) int64 { return c.cg.usage }), m(func(c containerMem) int64 { return c.cg.anon }),
				m(func(c containerMem) int64 { return c.cg.file }), m(func(c containerMem) int64 { return c.cg.usage - c.cg.anon - c.cg.file }),
				m(func(c containerMem) int64 { return c.proc.rss }),
				m(func(c containerMem) int64 { return c.proc.anon }), m(func(c containerMem) int64 { return c.proc.pss }))
		}
	}
	if fr.composeErr != "" {
		p("\ncompose not measured: %s\n", fr.composeErr)
	}
	p("\nA file page is charged to the cgroup that first reads it: the pause binary's pages go to the first sandbox that ran it since they were last evicted, so the mean over many sandboxes is the figure to compare. `usage_in_bytes` (v1) also counts the cgroup's kernel memory.\n")
	r.rawLink(s, "footprint", fr.rows())
}

func (r *results) footprintSection(s *strings.Builder) {
	p := func(format string, args ...interface{}) { fmt.Fprintf(s, format, args...) }
	fr := r.footprint
	p("## 3c. Node footprint per pod\n\n")
	p("The same %d idle pods as 3b, per system: what the node holds for them beyond the apps themselves, divided by the pods. berth's process (`VmRSS`); the sandboxes (cgroup usage); the engine's per-container processes, found in `/proc`: the `containerd-shim-runc-v2` of each container (`-id` one of the pods' containers) and the `docker-proxy` of each published port (`-host-port` one of the pods' ports; Docker starts one per address family); and dockerd's and containerd's `VmRSS` growth from before the pods were created to the measurement. "+
		"RSS counts shared pages (the shim binary's text) in every process; PSS, in brackets, shares them out. docker-compose keeps no process running once `up -d` returns.\n\n", fr.pods)
	if len(fr.systems) == 0 {
		p("Not measured (see Errors).\n\n")
		return
	}
	p("| MiB per pod |")
	for _, sys := range fr.systems {
		p(" %s |", sys.system)
	}
	p("\n|---|")
	for range fr.systems {
		p("---|")
	}
	p("\n")
	names := fr.systems[0].parts()
	for i, part := range names {
		p("| %s |", part.name)
		for _, sys := range fr.systems {
			pt := sys.parts()[i]
			cell := fmt.Sprintf("%.3f", mib(sys.perPod(pt.rss)))
			if pt.pss >= 0 && pt.pss != pt.rss {
				cell += fmt.Sprintf(" (%.3f)", mib(sys.perPod(pt.pss)))
			}
			if pt.count > 1 {
				cell += fmt.Sprintf("; %d of them", pt.count)
			}
			p(" %s |", cell)
		}
		p("\n")
	}
	p("| **total, apps excluded, by RSS** |")
	for _, sys := range fr.systems {
		p(" **%.2f** |", mib(sys.perPod(sys.total(false))))
	}
	p("\n| **total, apps excluded, by PSS** (sandboxes: cgroup usage) |")
	for _, sys := range fr.systems {
		p(" **%.2f** |", mib(sys.perPod(sys.total(true))))
	}
	p("\n| app containers (cgroup usage), for scale |")
	for _, sys := range fr.systems {
		p(" %.3f |", mib(meanOf(sys.apps, func(c containerMem) int64 { return c.cg.usage })))
	}
	p("\n| pods started in (ms) |")
	for _, sys := range fr.systems {
		p(" %s |", msStr(sys.startup))
	}
	p("\n\nEngine memory (MiB, VmRSS) before the pods → at the measurement:")
	for _, sys := range fr.systems {
		p(" %s: dockerd %.1f → %.1f, containerd %.1f → %.1f;", sys.system, mib(float64(sys.dockerd0.rss)), mib(float64(sys.dockerd1.rss)),
			mib(float64(sys.containerd0.rss)), mib(float64(sys.containerd1.rss)))
	}
	p(" berth's pods are measured first, then taken down, then compose's; each growth is from just before that system's pods.\n\n")
}

// rows are the raw rows of the sandbox and footprint scenarios: one per
// container and per process measured, bytes.
func (fr *footprintResults) rows() int { return len(fr.table()) - 1 }

func (fr *footprintResults) table() [][]string {
	rows := [][]string{{"system", "kind", "id_or_pid", "cgroup_usage", "cgroup_anon", "cgroup_file", "rss", "rss_anon", "pss"}}
	i64 := func(n int64) string { return strconv.FormatInt(n, 10) }
	proc := func(sys, kind string, m procMem) []string {
		return []string{sys, kind, strconv.Itoa(m.pid), "", "", "", i64(m.rss), i64(m.anon), i64(m.pss)}
	}
	for _, s := range fr.systems {
		for _, set := range []struct {
			kind string
			cs   []containerMem
		}{{"sandbox", s.sandboxes}, {"app", s.apps}} {
			for _, c := range set.cs {
				rows = append(rows, []string{s.system, set.kind, c.id[:12], i64(c.cg.usage), i64(c.cg.anon), i64(c.cg.file), i64(c.proc.rss), i64(c.proc.anon), i64(c.proc.pss)})
			}
		}
		if s.agent.pid != 0 {
			rows = append(rows, proc(s.system, "agent", s.agent))
		}
		for _, m := range s.shims {
			rows = append(rows, proc(s.system, "containerd-shim", m))
		}
		for _, m := range s.proxies {
			rows = append(rows, proc(s.system, "docker-proxy", m))
		}
		rows = append(rows, proc(s.system, "dockerd-before", s.dockerd0), proc(s.system, "dockerd-after", s.dockerd1),
			proc(s.system, "containerd-before", s.containerd0), proc(s.system, "containerd-after", s.containerd1))
	}
	return rows
}

func (lr *linearResult) goal() goal {
	size := "1,000 pods one by one on one node"
	if lr.sizing != "" {
		size = "pods one by one on one node, " + lr.sizing
	}
	g := goal{name: "etcd: per-node cost linear in its pods (" + size + ")", target: fmt.Sprintf("CPU per put over the last window (100) ≤ %.1f× that over the first", linearGoal), verdict: notMeasured}
	if lr.err == "" && lr.ratio > 0 {
		g.measured, g.verdict = fmt.Sprintf("%.2f× (`Benchmark%s`, section 4c)", lr.ratio, linearBenchmark), verdict(lr.ratio <= linearGoal)
	} else if lr.err != "" {
		g.measured = "failed: " + firstLine(lr.err)
	}
	return g
}

func (r *results) linearSection(s *strings.Builder) {
	lr := r.linear
	fmt.Fprintf(s, "## 4c. etcd: one node, pods put one by one\n\n`Benchmark%s` of test/scale, run as it is (its doc comment has the method: one etcd member in its own process, one agent with the real etcd source, informer, store, controller on the in-memory runtime and status publisher; the CPU of this process per put over the first and the last window).\n\n`%s` (%s", linearBenchmark, lr.cmd, lr.dur.Round(time.Second))
	if lr.err != "" {
		fmt.Fprintf(s, ", **failed: %s**", firstLine(lr.err))
	}
	if lr.sizing != "" {
		fmt.Fprintf(s, ", resized by %s", lr.sizing)
	}
	fmt.Fprintf(s, "):\n\n```\n%s\n```\n\n", benchLines(lr.out))
}

// sizeStr renders a byte count in KiB below 1 MiB, else in MiB.
func sizeStr(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", mib(float64(n)))
}
