package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	goruntime "runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

type results struct {
	began, ended time.Time
	loadEnd      string
	machine      machineInfo
	// rawFiles are the CSV files of the raw rows, by scenario.
	rawFiles     map[string]string
	start        *startResults
	reaction     *reactionResults
	idle         *idleResults
	inmem        []inmemResult
	configMap    *configMapResults
	errors       []string
	repeated     []string // failed attempts that were repeated
	engineBreaks int64    // dockerd restarts observed
}

type machineInfo struct {
	date, kernel, cpu, mem, docker, compose, goVersion, commit, loadStart string
	nproc, othersRunning                                                  int
}

func (b *bench) machine(ctx context.Context) machineInfo {
	m := machineInfo{
		date:      time.Now().UTC().Format("2006-01-02 15:04 MST"),
		nproc:     goruntime.NumCPU(),
		goVersion: goruntime.Version(),
		loadStart: loadavg(),
		kernel:    readTrim("/proc/sys/kernel/osrelease"),
		cpu:       procField("/proc/cpuinfo", "model name"),
	}
	if kb, err := strconv.ParseFloat(strings.Fields(procField("/proc/meminfo", "MemTotal") + " 0")[0], 64); err == nil {
		m.mem = fmt.Sprintf("%.1f GiB", kb/(1<<20))
	}
	if info, err := b.cli.Info(ctx); err == nil {
		m.docker = fmt.Sprintf("%s (API %s), storage %s, cgroup v%s %s", info.ServerVersion, b.cli.ClientVersion(),
			info.Driver, info.CgroupVersion, info.CgroupDriver)
		m.othersRunning = info.ContainersRunning
	}
	if out, err := exec.CommandContext(ctx, b.opt.compose, "version", "--short").Output(); err == nil {
		m.compose = strings.TrimSpace(string(out))
	} else {
		m.compose = "not installed"
	}
	if out, err := exec.CommandContext(ctx, "git", "-C", b.root, "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.commit = strings.TrimSpace(string(out))
		if st, err := exec.CommandContext(ctx, "git", "-C", b.root, "status", "--porcelain").Output(); err == nil && len(st) > 0 {
			m.commit += " + uncommitted changes"
		}
	}
	return m
}

func readTrim(path string) string {
	data, _ := os.ReadFile(path)
	return strings.TrimSpace(string(data))
}

// procField returns the value of the first "key: value" line of a /proc file.
func procField(path, key string) string {
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

func loadavg() string {
	f := strings.Fields(readTrim("/proc/loadavg"))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// ---------------------------------------------------------------- stats

type summary struct {
	med, min, max time.Duration
	n             int
}

func summarize(ds []time.Duration) summary {
	if len(ds) == 0 {
		return summary{}
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return summary{med: med, min: s[0], max: s[len(s)-1], n: len(s)}
}

func (s summary) String() string {
	if s.n == 0 {
		return "–"
	}
	return fmt.Sprintf("%s (%s–%s)", msStr(s.med), msStr(s.min), msStr(s.max))
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func msStr(d time.Duration) string {
	if d >= 100*time.Millisecond || d <= -100*time.Millisecond {
		return fmt.Sprintf("%.0f", msf(d))
	}
	return fmt.Sprintf("%.1f", msf(d))
}

func pick(ts []reactionTrial, f func(reactionTrial) time.Duration) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, t := range ts {
		out[i] = f(t)
	}
	return out
}

func ratio(a, b summary) string {
	if a.n == 0 || b.n == 0 || b.med == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", float64(a.med)/float64(b.med))
}

// ---------------------------------------------------------------- markdown

type goal struct{ name, target, measured, verdict string }

func verdict(ok bool) string {
	if ok {
		return "**met**"
	}
	return "**not met**"
}

const notMeasured = "not measured"

func (r *results) goals(opt options) []goal {
	var gs []goal
	if s := r.start; s != nil {
		g := goal{name: "Start: berth's time over the direct Docker calls", target: "berth/direct ≤ 1.10 at every N (median of the rounds' ratios)", verdict: notMeasured}
		var parts []string
		ok, any := true, false
		for _, n := range opt.ns {
			if r, k := s.pairedRatio(n, sysDirect); k > 0 {
				any, ok = true, ok && r <= 1.10
				parts = append(parts, fmt.Sprintf("N=%d: %.2f", n, r))
			}
		}
		if any {
			m, _, _ := s.compare(opt.ns, sysDirect, func(summary, summary) bool { return true })
			g.measured = "median of the rounds' ratios " + strings.Join(parts, ", ") + "; ratio of the medians " + m
			g.verdict = verdict(ok)
		}
		gs = append(gs, g)
		g = goal{name: "Start: faster than docker-compose", target: "berth's median below compose's at every N", verdict: notMeasured}
		if s.composeSkipped != "" {
			g.measured = s.composeSkipped
		} else if m, ok, any := s.compare(opt.ns, sysCompose, func(b, c summary) bool { return b.med < c.med }); any {
			g.measured, g.verdict = "berth/compose "+m, verdict(ok)
		}
		gs = append(gs, g)
	}
	if rr := r.reaction; rr != nil {
		dock := summarize(rr.dockerOnly)
		limit := 100*time.Millisecond + dock.med
		for _, k := range []struct {
			name   string
			trials []reactionTrial
		}{{"docker kill", rr.kill}, {"docker rm -f", rr.rm}} {
			g := goal{name: "Reaction to " + k.name + ": container death (\"die\") → replacement running",
				target: fmt.Sprintf("≤ 100 ms + Docker's create+start (%s ms) = %s ms", msStr(dock.med), msStr(limit)), verdict: notMeasured}
			s := summarize(pick(k.trials, func(t reactionTrial) time.Duration { return t.dieToStart }))
			if s.n > 0 && dock.n > 0 {
				g.measured = fmt.Sprintf("median %s ms (%s–%s), %d trials; minus Docker's create+start: %s ms",
					msStr(s.med), msStr(s.min), msStr(s.max), s.n, msStr(s.med-dock.med))
				g.verdict = verdict(s.med <= limit)
			}
			gs = append(gs, g)
		}
	}
	if ir := r.idle; ir != nil && ir.window > 0 {
		gs = append(gs,
			goal{fmt.Sprintf("Idle CPU with %d pods", ir.pods), "< 1 % of one core",
				fmt.Sprintf("%.2f %% (%.2f CPU-s in %s)", ir.cpuPercent(), ir.cpuSeconds, ir.window.Round(time.Second)), verdict(ir.cpuPercent() < 1)},
			goal{fmt.Sprintf("Idle RSS with %d pods", ir.pods), "< 80 MiB",
				fmt.Sprintf("%.1f MiB (peak over its life %.1f MiB)", float64(ir.rssKiB)/1024, float64(ir.hwmKiB)/1024), verdict(ir.rssKiB < 80*1024)},
		)
		perPod := float64(total(ir.startupReqs)) / float64(ir.pods)
		gs = append(gs, goal{"Start: Docker requests per pod", "create + start per container, plus the sandbox's inspect for its IP (no event carries it): 5",
			fmt.Sprintf("%.2f per pod (%d requests for %d pods, counted by the proxy)", perPod, total(ir.startupReqs), ir.pods), verdict(perPod <= 5.05)})
		perMin := float64(ir.windowTotal()) / ir.window.Minutes()
		gs = append(gs, goal{"Idle: event-driven, no per-pod polling", fmt.Sprintf("fewer Docker requests per minute than pods (%d)", ir.pods),
			fmt.Sprintf("%d requests in %s (%.1f/min)", ir.windowTotal(), ir.window.Round(time.Second), perMin), verdict(perMin < float64(ir.pods))})
	}
	return gs
}

// pairedRatio is the median over the rounds of N of berth's time over
// system's in the same round, and the number of such rounds. A round runs
// every system back to back, so on a shared machine its ratio is less
// exposed to the load drifting between rounds than the ratio of medians.
func (s *startResults) pairedRatio(n int, system string) (float64, int) {
	byRound := func(sys string) map[int]time.Duration {
		m := map[int]time.Duration{}
		for _, r := range s.runs {
			if r.system == sys && r.n == n && r.err == "" {
				m[r.run] = r.total
			}
		}
		return m
	}
	b, o := byRound(sysBerth), byRound(system)
	var rs []float64
	for round, bt := range b {
		if ot, ok := o[round]; ok && ot > 0 {
			rs = append(rs, float64(bt)/float64(ot))
		}
	}
	if len(rs) == 0 {
		return 0, 0
	}
	sort.Float64s(rs)
	med := rs[len(rs)/2]
	if len(rs)%2 == 0 {
		med = (rs[len(rs)/2-1] + rs[len(rs)/2]) / 2
	}
	return med, len(rs)
}

// compare puts berth beside system at every N measured for both: the ratios
// as text, whether pass held at every such N, and whether there was any.
func (s *startResults) compare(ns []int, system string, pass func(berth, other summary) bool) (text string, ok, any bool) {
	var parts []string
	ok = true
	for _, n := range ns {
		bs, other := summarize(s.durations(sysBerth, n)), summarize(s.durations(system, n))
		if bs.n == 0 || other.n == 0 {
			continue
		}
		any = true
		ok = ok && pass(bs, other)
		parts = append(parts, fmt.Sprintf("N=%d: %s", n, ratio(bs, other)))
	}
	return strings.Join(parts, ", "), ok, any
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func (r *results) markdown(opt options) string {
	var s strings.Builder
	p := func(format string, args ...interface{}) { fmt.Fprintf(&s, format, args...) }
	m := r.machine
	cmd := "go run ./bench/cmd/berthbench"
	if opt.args != "" {
		cmd += " " + opt.args
	}
	p("# berth benchmarks\n\n")
	p("Generated by `%s` (see [bench/README.md](bench/README.md) for the method). Raw rows are in CSV files under bench/results, linked from each section; times are milliseconds.\n\n", cmd)
	p("| | |\n|---|---|\n")
	p("| Date | %s (the run took %s) |\n", m.date, r.ended.Sub(r.began).Round(time.Second))
	p("| Machine | nproc %d, %s memory, CPU %s |\n", m.nproc, m.mem, m.cpu)
	p("| Kernel | %s |\n", m.kernel)
	p("| Docker | %s |\n", m.docker)
	p("| docker-compose | %s |\n", m.compose)
	p("| Go, berth | %s, commit %s |\n", m.goVersion, m.commit)
	p("| Shared machine | load average %s at the start, %s at the end; %d containers of other work running on the engine at the start |\n\n",
		m.loadStart, r.loadEnd, m.othersRunning)

	if gs := r.goals(opt); len(gs) > 0 {
		p("## Goals\n\n| Goal | Target | Measured | Verdict |\n|---|---|---|---|\n")
		for _, g := range gs {
			p("| %s | %s | %s | %s |\n", g.name, g.target, g.measured, g.verdict)
		}
		p("\n")
	}
	if r.start != nil {
		r.startSection(&s, opt)
	}
	if r.reaction != nil {
		r.reactionSection(&s)
	}
	if r.idle != nil {
		r.idleSection(&s)
	}
	if len(r.inmem) > 0 {
		p("## 4. In-memory benchmarks\n\nThe existing Go benchmarks, run from the module root: the controller on the in-memory runtime (10 000 two-container pods from one source update to all running) and the go-memdb store.\n\n")
		for _, im := range r.inmem {
			p("`%s` (%s", im.cmd, im.dur.Round(time.Second))
			if im.err != "" {
				p(", **failed: %s**", im.err)
			}
			p("):\n\n```\n%s\n```\n\n", benchLines(im.out))
		}
	}
	if r.configMap != nil {
		r.configMapSection(&s)
	}
	if len(r.repeated) > 0 || r.engineBreaks > 0 {
		p("## Repeated measurements\n\nThe Docker event stream broke %d times during the run (dockerd restarted, by other work on this shared machine). A measurement that failed or saw such a restart was repeated (up to 3 attempts); the failed attempts:\n\n", r.engineBreaks)
		for _, e := range r.repeated {
			p("- %s\n", strings.ReplaceAll(e, "|", "\\|"))
		}
		p("\n")
	}
	if len(r.errors) > 0 {
		p("## Errors\n\n")
		for _, e := range r.errors {
			p("```\n%s\n```\n\n", strings.TrimSpace(e))
		}
	}
	return s.String()
}

func (r *results) startSection(s *strings.Builder, opt options) {
	p := func(format string, args ...interface{}) { fmt.Fprintf(s, format, args...) }
	st := r.start
	p("## 1. Start latency\n\n")
	p("N pods as users write them: each one app container (`%s`, args `[\"sleep\"]`) publishing containerPort %d on its own hostPort (%d + i), plus the sandbox (`%s`) that holds the network namespace and the port. "+
		"From nothing to all 2N containers running. The clock starts before the first pod file is written (berth), before the first Docker call (direct) or before the exec of `docker-compose up -d` (compose), "+
		"and stops when the bench, following the engine's event stream, has seen the 2N-th container `start` event: the same observation, on the bench's one clock, for every system. "+
		"%d runs per N and system, in rotating order; everything is removed between runs (untimed).\n\n",
		testImage, appPort, opt.portBase, "berth/pause", opt.runs)
	p("- **berth**: the real binary, a fresh process per run with its own pods dir, root dir, node name and port, default settings (4 workers); it was ready (`/readyz`) before the clock started. Pod files are written as editors and config tools do, to a dot-file renamed into the directory.\n")
	p("- **direct**, the physical limit: a Go program making only the calls a pod cannot do without, through the same Docker client library: per pod `POST /containers/create` and `/start` of the sandbox (pause image, hostname, the port binding), then `create` and `start` of the app container with `NetworkMode: container:<sandbox>`. No inspect, no image check, no status, no decoding; %d goroutines take pods from a list (berth's worker count). Anyone can check it is the limit: it is what berth must ask of the engine, with nothing around it (`directPod` in bench/cmd/berthbench/docker.go); the sweep below shows how it varies with concurrency.\n", opt.workers)
	p("- **compose**: `docker-compose up -d` of an equivalent file: per pod a sandbox service (the pause image, `network_mode: bridge`, `ports: [\"H:%d\"]`) and an app service with `network_mode: \"service:<sandbox>\"`, i.e. the same 2N containers, namespaces and ports. Its Python start-up is included. `COMPOSE_PARALLEL_LIMIT` is the default 64, raised to 2N when 2N > 64: with more services than the limit docker-compose 1.29 can deadlock (docker/compose#5864, #8161; a run of 200 services here stalled after 21 containers).\n", appPort)
	if st.composeSkipped != "" {
		p("- compose baseline skipped: %s\n", st.composeSkipped)
	}
	p("\nMedian (min–max), ms. berth/direct is given twice: the ratio of the medians, and the median of the ratios of each round (a round runs the three systems back to back, so its ratio is less exposed to the shared machine's load drifting between rounds):\n\n| N | berth | direct | compose | berth/direct (medians) | berth/direct (rounds) | berth/compose | berth − direct per pod |\n|---|---|---|---|---|---|---|---|\n")
	for _, n := range opt.ns {
		bs, ds, cs := summarize(st.durations(sysBerth, n)), summarize(st.durations(sysDirect, n)), summarize(st.durations(sysCompose, n))
		per := "–"
		if bs.n > 0 && ds.n > 0 {
			per = msStr((bs.med - ds.med) / time.Duration(n))
		}
		paired := "–"
		if r, k := st.pairedRatio(n, sysDirect); k > 0 {
			paired = fmt.Sprintf("%.2f", r)
		}
		p("| %d | %s | %s | %s | %s | %s | %s | %s |\n", n, bs, ds, cs, ratio(bs, ds), paired, ratio(bs, cs), per)
	}
	if len(st.sweep) > 0 {
		p("\nThe direct baseline at N = %d with other concurrencies (one run each, after the runs above), ms:\n\n| goroutines | total |\n|---|---|\n", st.sweepN)
		var ws []int
		for w := range st.sweep {
			ws = append(ws, w)
		}
		sort.Ints(ws)
		for _, w := range ws {
			p("| %d | %s |\n", w, summarize(st.sweep[w]))
		}
	}
	p("\nWhere berth's time goes (medians, ms): the delay to its first `create` (file event, decode, store, queue, first calls; engine timestamp of the first `create` event), and berth's own `berth_pod_start_duration_seconds` (desired state seen → all containers running, mean over the run's pods).\n\n")
	p("| N | berth: → first create | direct: → first create | berth: mean pod start (its metric) |\n|---|---|---|---|\n")
	for _, n := range opt.ns {
		var bf, df, bm []time.Duration
		for _, run := range st.runs {
			if run.n != n || run.err != "" {
				continue
			}
			switch run.system {
			case sysBerth:
				bf = append(bf, run.firstCreate)
				if run.berthMean > 0 {
					bm = append(bm, run.berthMean)
				}
			case sysDirect:
				df = append(df, run.firstCreate)
			}
		}
		p("| %d | %s | %s | %s |\n", n, summarize(bf), summarize(df), summarize(bm))
	}
	r.rawLink(s, "start", len(st.runs))
}

// rawLink points to the CSV file of scenario's raw rows.
func (r *results) rawLink(s *strings.Builder, scenario string, rows int) {
	if f := r.rawFiles[scenario]; f != "" {
		fmt.Fprintf(s, "\nRaw rows (%d, ms): [%s](%s)\n\n", rows, f, f)
	} else {
		s.WriteString("\n")
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.ReplaceAll(s, "|", "\\|")
}

func (r *results) reactionSection(s *strings.Builder) {
	p := func(format string, args ...interface{}) { fmt.Fprintf(s, format, args...) }
	rr := r.reaction
	p("## 2. Reaction latency\n\n")
	p("berth (backoff.initial 10ms, backoff.max 100ms; every trial uses another pod, so each restart is a first restart, which berth makes at once) runs 2×%d one-app pods. "+
		"A trial kills the app container (`POST /containers/{id}/kill`, SIGKILL, as `docker kill`) or force-removes it (`DELETE /containers/{id}?force=1`, as `docker rm -f`) and waits for the replacement's `start` event. "+
		"Times are between the engine's event timestamps (call: our clock just before the API call). "+
		"Docker only: create+start of one app container joined to a running sandbox, made directly.\n\n", len(rr.kill))
	p("| | median (min–max), ms | trials |\n|---|---|---|\n")
	row := func(name string, ds []time.Duration) {
		p("| %s | %s | %d |\n", name, summarize(ds), len(ds))
	}
	k := func(f func(reactionTrial) time.Duration) []time.Duration { return pick(rr.kill, f) }
	m := func(f func(reactionTrial) time.Duration) []time.Duration { return pick(rr.rm, f) }
	row("kill: call → `die`", k(func(t reactionTrial) time.Duration { return t.callToGone }))
	row("kill: `die` → replacement `create` (berth's detection + create)", k(func(t reactionTrial) time.Duration { return t.dieToCreate }))
	row("**kill: `die` → replacement `start`**", k(func(t reactionTrial) time.Duration { return t.dieToStart }))
	row("kill: call → replacement `start`", k(func(t reactionTrial) time.Duration { return t.callToStart }))
	row("rm -f: call → `destroy`", m(func(t reactionTrial) time.Duration { return t.callToGone }))
	row("**rm -f: `die` → replacement `start`**", m(func(t reactionTrial) time.Duration { return t.dieToStart }))
	row("rm -f: `destroy` → replacement `start`", m(func(t reactionTrial) time.Duration { return t.goneToStart }))
	row("rm -f: call → replacement `start`", m(func(t reactionTrial) time.Duration { return t.callToStart }))
	row("**Docker only: create+start → `start` event**", rr.dockerOnly)
	row("Docker only: duration of the create and start calls", rr.dockerCall)
	r.rawLink(s, "reaction", len(rr.kill)+len(rr.rm)+len(rr.dockerOnly))
}

func (r *results) idleSection(s *strings.Builder) {
	p := func(format string, args ...interface{}) { fmt.Fprintf(s, format, args...) }
	ir := r.idle
	p("## 3. Docker requests and idle cost\n\n")
	p("berth with default timings (file rescan 20 s, controller resync 60 s, relist 5 min, cAdvisor off) runs %d of the pods above (one app container, a hostPort each); its `docker.host` is a counting reverse proxy on a Unix socket in front of the engine. "+
		"After all containers started (%s ms) and a settle time, berth's CPU (utime+stime from `/proc/<pid>/stat`) and Docker requests are measured over the window; RSS is `VmRSS` at the end of the window. "+
		"A long-lived request (the events stream) counts once, when it starts.\n\n", ir.pods, msStr(ir.startup))
	if ir.window == 0 {
		p("Not completed (see Errors).\n\n")
		return
	}
	p("| | |\n|---|---|\n")
	p("| Window | %s |\n", ir.window.Round(time.Millisecond))
	p("| CPU | %.2f CPU-s = **%.2f %% of one core** (USER_HZ %d) |\n", ir.cpuSeconds, ir.cpuPercent(), ir.clkTck)
	p("| RSS (VmRSS) at the end | **%.1f MiB** |\n", float64(ir.rssKiB)/1024)
	p("| Peak RSS over berth's life (VmHWM, includes the start of %d pods) | %.1f MiB |\n", ir.pods, float64(ir.hwmKiB)/1024)
	p("| Goroutines (go_goroutines) | %.0f |\n", ir.goroutines)
	p("| Docker API requests in the window | **%d** (%.1f per minute) |\n", ir.windowTotal(), float64(ir.windowTotal())/ir.window.Minutes())
	p("| berth CPU to start the %d pods (ready → all started + 2 s) | %.2f CPU-s |\n", ir.pods, ir.startupCPU)
	var open []string
	for k, v := range ir.openStreams {
		open = append(open, fmt.Sprintf("`%s` ×%d", k, v))
	}
	sort.Strings(open)
	p("| Requests still open at the end (streams) | %s |\n\n", strings.Join(open, ", "))

	keys := map[string]bool{}
	for _, mp := range []map[string]int{ir.bootReqs, ir.startupReqs, ir.settleReqs, ir.windowReqs} {
		for k := range mp {
			keys[k] = true
		}
	}
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	p("Docker API requests by phase (method and path pattern):\n\n| request | berth start → ready | %d pods started (+2 s) | settle (%s) | idle window (%s) |\n|---|---|---|---|---|\n",
		ir.pods, ir.settle, ir.window.Round(time.Second))
	tot := [4]int{}
	for _, k := range ks {
		vals := [4]int{ir.bootReqs[k], ir.startupReqs[k], ir.settleReqs[k], ir.windowReqs[k]}
		for i, v := range vals {
			tot[i] += v
		}
		p("| `%s` | %d | %d | %d | %d |\n", k, vals[0], vals[1], vals[2], vals[3])
	}
	p("| total | %d | %d | %d | %d |\n", tot[0], tot[1], tot[2], tot[3])
	p("| **per pod** | | **%.2f** | | |\n\n", float64(tot[1])/float64(ir.pods))
	p("Per pod start the direct baseline makes 4 requests (create and start of 2 containers); berth adds one inspect of the sandbox, for the IP that no event carries (pod status and probes need it). Image checks are one per image, not per pod (IDs are cached).\n\n")
}
