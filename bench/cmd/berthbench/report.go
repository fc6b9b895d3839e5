package main

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/berth-dev/berth/bench/internal/benchkit"
)

type results struct {
	began, ended time.Time
	loadEnd      string
	pauseImage   string // the pause image of berth's sandboxes and of every baseline
	machine      machineInfo
	// rawFiles are the CSV files of the raw rows, by scenario.
	rawFiles     map[string]string
	start        *startResults
	reaction     *reactionResults
	idle         *idleResults
	inmem        []inmemResult
	configMap    *configMapResults
	footprint    *footprintResults
	linear       *linearResult
	errors       []string
	repeated     []string // failed attempts that were repeated
	engineBreaks int64    // dockerd restarts observed
}

// machineInfo is the machine of the run, and the docker-compose of its
// baseline.
type machineInfo struct {
	benchkit.Machine
	compose string // its version, or "not installed"
}

func (b *bench) machine(ctx context.Context) machineInfo {
	m := machineInfo{Machine: benchkit.ReadMachine(ctx, b.cli, b.root)}
	if out, err := exec.CommandContext(ctx, b.opt.compose, "version", "--short").Output(); err == nil {
		m.compose = strings.TrimSpace(string(out))
	} else {
		m.compose = "not installed"
	}
	return m
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
		gs = append(gs, s.goals(opt)...)
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
	if fr := r.footprint; fr != nil {
		gs = append(gs, fr.goals()...)
	}
	if lr := r.linear; lr != nil {
		gs = append(gs, lr.goal())
	}
	return gs
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
	p("| Date | %s (the run took %s) |\n", m.Date, r.ended.Sub(r.began).Round(time.Second))
	p("| Machine | nproc %d, %s memory, CPU %s |\n", m.NProc, m.Mem, m.CPU)
	p("| Kernel | %s |\n", m.Kernel)
	p("| Docker | %s |\n", m.Docker)
	p("| docker-compose | %s |\n", m.compose)
	p("| Go, berth | %s, commit %s |\n", m.GoVersion, m.Commit)
	p("| Shared machine | load average %s at the start, %s at the end; %d containers of other work running on the engine at the start |\n\n",
		m.LoadStart, r.loadEnd, m.OthersRunning)

	if gs := r.goals(opt); len(gs) > 0 {
		p("## Goals\n\n| Goal | Target | Measured | Verdict |\n|---|---|---|---|\n")
		for _, g := range gs {
			p("| %s | %s | %s | %s |\n", g.name, g.target, g.measured, g.verdict)
		}
		p("\n")
	}
	if r.start != nil {
		r.startSection(&s, opt)
		r.teardownSection(&s, opt)
	}
	if r.reaction != nil {
		r.reactionSection(&s)
	}
	if r.idle != nil {
		r.idleSection(&s)
	}
	if r.footprint != nil {
		r.sandboxSection(&s)
		r.footprintSection(&s)
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
	if r.linear != nil {
		r.linearSection(&s)
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
