package main

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Start and teardown targets.
const (
	startGoal    = 1.05 // berth / minimal direct calls, at every N
	teardownGoal = 1.10 // berth / direct graceful stop, at every N
)

// pairedRatio is the median over the rounds of N of a's time over b's in
// the same round (the start's, or the teardown's when down), and the number
// of such rounds. A round runs every system back to back, so on a shared
// machine its ratio is less exposed to the load drifting between rounds
// than the ratio of medians.
func (s *startResults) pairedRatio(n int, a, b string, down bool) (float64, int) {
	byRound := func(sys string) map[int]time.Duration {
		m := map[int]time.Duration{}
		for _, r := range s.runs {
			if r.system != sys || r.n != n || r.err != "" {
				continue
			}
			if !down {
				m[r.run] = r.total
			} else if r.down.err == "" && r.down.total > 0 {
				m[r.run] = r.down.total
			}
		}
		return m
	}
	am, bm := byRound(a), byRound(b)
	var rs []float64
	for round, at := range am {
		if bt, ok := bm[round]; ok && bt > 0 {
			rs = append(rs, float64(at)/float64(bt))
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

// ratios renders a/b per N (median of the rounds' ratios) and whether
// pass held at every N measured; any tells whether there was one.
func (s *startResults) ratios(ns []int, a, b string, down bool, pass func(float64) bool) (text string, ok, any bool) {
	var parts []string
	ok = true
	for _, n := range ns {
		if r, k := s.pairedRatio(n, a, b, down); k > 0 {
			any, ok = true, ok && pass(r)
			parts = append(parts, fmt.Sprintf("N=%d: %.2f", n, r))
		}
	}
	return strings.Join(parts, ", "), ok, any
}

// medianRatios renders a/b per N as the ratio of the medians and whether
// a's median was below b's at every N.
func (s *startResults) medianRatios(ns []int, a, b string, down bool) (text string, below, any bool) {
	var parts []string
	below = true
	for _, n := range ns {
		as, bs := summarize(s.durations(a, n, down)), summarize(s.durations(b, n, down))
		if as.n == 0 || bs.n == 0 {
			continue
		}
		any, below = true, below && as.med < bs.med
		parts = append(parts, fmt.Sprintf("N=%d: %s", n, ratio(as, bs)))
	}
	return strings.Join(parts, ", "), below, any
}

func (s *startResults) goals(opt options) []goal {
	var gs []goal
	g := goal{name: "Start: berth over the minimal direct calls", target: fmt.Sprintf("berth/minimal ≤ %.2f at every N (median of the rounds' ratios)", startGoal), verdict: notMeasured}
	if m, ok, any := s.ratios(opt.ns, sysBerth, sysMinimal, false, func(r float64) bool { return r <= startGoal }); any {
		med, _, _ := s.medianRatios(opt.ns, sysBerth, sysMinimal, false)
		g.measured, g.verdict = "rounds "+m+"; ratio of the medians "+med, verdict(ok)
	}
	gs = append(gs, g)
	g = goal{name: "Start: the price of berth's container config", target: "reported: direct calls with berth's config over minimal ones, and berth over those", verdict: notMeasured}
	if m, _, any := s.ratios(opt.ns, sysBerthCfg, sysMinimal, false, func(float64) bool { return true }); any {
		b, _, _ := s.ratios(opt.ns, sysBerth, sysBerthCfg, false, func(float64) bool { return true })
		g.measured, g.verdict = "berth-config/minimal "+m+"; berth/berth-config "+b, "reported"
	}
	gs = append(gs, g)
	g = goal{name: "Start: faster than docker-compose", target: "berth's median below compose's at every N", verdict: notMeasured}
	if s.composeSkipped != "" {
		g.measured = s.composeSkipped
	} else if m, ok, any := s.medianRatios(opt.ns, sysBerth, sysCompose, false); any {
		g.measured, g.verdict = "berth/compose "+m, verdict(ok)
	}
	gs = append(gs, g)
	g = goal{name: "Teardown: berth over a direct graceful stop", target: fmt.Sprintf("berth/direct ≤ %.2f at every N (median of the rounds' ratios; direct: the minimal pods stopped and removed, app then sandbox, %d workers)", teardownGoal, opt.workers), verdict: notMeasured}
	if m, ok, any := s.ratios(opt.ns, sysBerth, sysMinimal, true, func(r float64) bool { return r <= teardownGoal }); any {
		med, _, _ := s.medianRatios(opt.ns, sysBerth, sysMinimal, true)
		cfg, _, _ := s.ratios(opt.ns, sysBerth, sysBerthCfg, true, func(float64) bool { return true })
		g.measured, g.verdict = "rounds "+m+"; ratio of the medians "+med+"; over the direct stop of berth-config pods "+cfg, verdict(ok)
	}
	gs = append(gs, g)
	g = goal{name: "Teardown: faster than docker-compose down", target: "berth's median below compose down's at every N", verdict: notMeasured}
	if s.composeSkipped != "" {
		g.measured = s.composeSkipped
	} else if m, ok, any := s.medianRatios(opt.ns, sysBerth, sysCompose, true); any {
		g.measured, g.verdict = "berth/compose "+m, verdict(ok)
	}
	gs = append(gs, g)
	return gs
}

func (r *results) startSection(s *strings.Builder, opt options) {
	p := func(format string, args ...interface{}) { fmt.Fprintf(s, format, args...) }
	st := r.start
	p("## 1. Start latency\n\n")
	p("N pods as users write them: each one app container (`%s`, args `[\"sleep\"]`) publishing containerPort %d on its own hostPort (%d + i), plus the sandbox (`%s`, the pause image berth's own sandboxes run) that holds the network namespace and the port. "+
		"The time runs from the bench's clock just before the action (the first pod file renamed into berth's pods directory; the first Docker call; the exec of `docker-compose up -d`) to the engine's timestamp of the 2N-th container `start` event: one clock, the host's, for every system, and no polling (the bench blocks on the engine's event stream). "+
		"%d rounds per N; a round runs every system once, in rotating order, and each system takes its pods down again before the next (that teardown is section 1b).\n\n",
		testImage, appPort, opt.portBase, r.pauseImage, opt.runs)
	p("- **berth**: ONE berth process for the whole scenario, as users run it (default settings, 4 workers), started before the first round; its pods come and go through its pods directory. Pod files are written to a dot-file first (untimed) and renamed into the directory, as editors and config tools do.\n")
	p("- **minimal**, the physical limit: a Go program making only the calls a pod cannot do without, through the same Docker client library, with the minimal config: per pod `POST /containers/create` and `/start` of the sandbox (the pause image, the hostname, the port binding; no mounts, no IPC mode), then `create` and `start` of the app container (image, args, `NetworkMode: container:<sandbox>`). No inspect, no image check, no status, no decoding; %d goroutines take pods from a list (berth's worker count). Anyone can check it is the limit: it is what any agent must ask of the engine, with nothing around it (`directPod` and `minimalSpecs` in bench/cmd/berthbench); the sweep below shows how it varies with concurrency.\n", opt.workers)
	p("- **berth-config**: the same program and calls, with the container configs berth creates: taken from a running berth pod (`docker inspect` of its sandbox and app: labels, `IpcMode: shareable` and `container:<sandbox>`, the termination-log bind mount, OOM score and CPU shares, hostname) and cloned per pod with its name, UID, host port and sandbox ID; the termination-log file is made per pod (mkdir, create, chmod) inside the timed part, as berth makes it. berth-config/minimal is the price of berth's config; berth/berth-config is berth's own overhead. The kubelet with Docker (dockershim, cri-dockerd) pays the same config: a sandbox with `IpcMode: shareable`, containers joined by `container:<sandbox>` namespaces, a `/dev/termination-log` bind per container, CPU shares 2 and OOM score adjustment 1000 for a BestEffort pod, and more (its own `/etc/hosts` bind per container, the service-account token volume).\n")
	p("- **compose**: `docker-compose up -d` of an equivalent file: per pod a sandbox service (the same pause image, `network_mode: bridge`, `ports: [\"H:%d\"]`) and an app service with `network_mode: \"service:<sandbox>\"`, i.e. the same 2N containers, namespaces and ports. Its Python start-up is included. `COMPOSE_PARALLEL_LIMIT` is the default 64, raised to 2N when 2N > 64: with more services than the limit docker-compose 1.29 can deadlock (docker/compose#5864, #8161).\n", appPort)
	if st.composeSkipped != "" {
		p("- compose baseline skipped: %s\n", st.composeSkipped)
	}
	if st.berthRestarts > 0 {
		p("- the long-running berth exited %d times during the scenario and was started again (see its log in the work dir with -keep)\n", st.berthRestarts)
	}
	p("\nMedian (min–max), ms; ratios are the median of the rounds' ratios (each round runs the systems back to back), berth/minimal also as the ratio of the medians:\n\n")
	p("| N | berth | minimal | berth-config | compose | berth/minimal (rounds) | berth/minimal (medians) | berth-config/minimal | berth/berth-config | berth/compose | berth − minimal per pod |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, n := range opt.ns {
		bs, ms, cs, cps := summarize(st.durations(sysBerth, n, false)), summarize(st.durations(sysMinimal, n, false)),
			summarize(st.durations(sysBerthCfg, n, false)), summarize(st.durations(sysCompose, n, false))
		per := "–"
		if bs.n > 0 && ms.n > 0 {
			per = msStr((bs.med - ms.med) / time.Duration(n))
		}
		p("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", n, bs, ms, cs, cps,
			st.paired(n, sysBerth, sysMinimal, false), ratio(bs, ms), st.paired(n, sysBerthCfg, sysMinimal, false),
			st.paired(n, sysBerth, sysBerthCfg, false), st.paired(n, sysBerth, sysCompose, false), per)
	}
	if len(st.sweep) > 0 {
		p("\nThe minimal baseline at N = %d with other concurrencies (one run each, after the rounds; removed by force), ms:\n\n| goroutines | total |\n|---|---|\n", st.sweepN)
		var ws []int
		for w := range st.sweep {
			ws = append(ws, w)
		}
		sort.Ints(ws)
		for _, w := range ws {
			p("| %d | %s |\n", w, summarize(st.sweep[w]))
		}
	}
	p("\nWhere berth's time goes (medians, ms): the delay to the first `create` event (berth: file event, decode, store, queue, first calls), and berth's own `berth_pod_start_duration_seconds` (desired state seen → all containers running, mean over the round's pods).\n\n")
	p("| N | berth: → first create | minimal: → first create | berth-config: → first create | berth: mean pod start (its metric) |\n|---|---|---|---|---|\n")
	for _, n := range opt.ns {
		first := map[string][]time.Duration{}
		var bm []time.Duration
		for _, run := range st.runs {
			if run.n != n || run.err != "" {
				continue
			}
			first[run.system] = append(first[run.system], run.firstCreate)
			if run.system == sysBerth && run.berthMean > 0 {
				bm = append(bm, run.berthMean)
			}
		}
		p("| %d | %s | %s | %s | %s |\n", n, summarize(first[sysBerth]), summarize(first[sysMinimal]), summarize(first[sysBerthCfg]), summarize(bm))
	}
	r.rawLink(s, "start", len(st.runs))
}

// paired renders pairedRatio, "–" when no round has both.
func (s *startResults) paired(n int, a, b string, down bool) string {
	if r, k := s.pairedRatio(n, a, b, down); k > 0 {
		return fmt.Sprintf("%.2f", r)
	}
	return "–"
}

func (r *results) teardownSection(s *strings.Builder, opt options) {
	p := func(format string, args ...interface{}) { fmt.Fprintf(s, format, args...) }
	st := r.start
	p("## 1b. Teardown latency\n\n")
	p("The pods of each start run of section 1, taken down %.0f s after their start (untimed pause): the time runs from the bench's clock just before the action (the first pod file removed from berth's pods directory; the first Docker call; the exec of `docker-compose down`) to the engine's timestamp of the 2N-th container `destroy` event. Every pod has `terminationGracePeriodSeconds: %d`; the app (`testapp sleep`) exits on SIGTERM at once, as the kill → die column shows.\n\n",
		settleUp.Seconds(), grace)
	p("- **berth**: the same long-running berth removes its pods: each pod's app is stopped (SIGTERM, grace period), then its sandbox, each removed.\n")
	p("- **direct graceful**, the limit: the start's direct program, %d goroutines taking pods from a list; per pod `POST /containers/{app}/stop?t=%d`, `DELETE /containers/{app}?force=1&v=1`, then the same for the sandbox (berth's order). On the minimal pods (the goal's baseline) and on the berth-config pods (where it also removes the pod's directory, as berth does).\n", opt.workers, grace)
	p("- **compose down**: `docker-compose down` of the start's project (its services have `stop_grace_period: %ds`).\n", grace)
	p("\nMedian (min–max), ms; ratios are the median of the rounds' ratios:\n\n")
	p("| N | berth | direct (minimal pods) | direct (berth-config pods) | compose down | berth/direct (rounds) | berth/direct (medians) | berth/direct berth-config | berth/compose |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, n := range opt.ns {
		bs, ms, cs, cps := summarize(st.durations(sysBerth, n, true)), summarize(st.durations(sysMinimal, n, true)),
			summarize(st.durations(sysBerthCfg, n, true)), summarize(st.durations(sysCompose, n, true))
		p("| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", n, bs, ms, cs, cps,
			st.paired(n, sysBerth, sysMinimal, true), ratio(bs, ms), st.paired(n, sysBerth, sysBerthCfg, true), st.paired(n, sysBerth, sysCompose, true))
	}
	p("\nThe app's stop, `kill` (SIGTERM sent) → `die`, median over the runs' medians, ms, and the containers that died of SIGKILL (exit 137: the grace period ran out) over all runs:\n\n| N | berth | direct (minimal) | direct (berth-config) | compose |\n|---|---|---|---|---|\n")
	for _, n := range opt.ns {
		cells := []string{}
		for _, sys := range []string{sysBerth, sysMinimal, sysBerthCfg, sysCompose} {
			var ds []time.Duration
			killed := 0
			for _, run := range st.runs {
				if run.system == sys && run.n == n && run.err == "" && run.down.err == "" && run.down.total > 0 {
					ds = append(ds, run.down.appStop)
					killed += run.down.sigkilled
				}
			}
			if len(ds) == 0 {
				cells = append(cells, "–")
				continue
			}
			cells = append(cells, fmt.Sprintf("%s; SIGKILLed %d", msStr(summarize(ds).med), killed))
		}
		p("| %d | %s |\n", n, strings.Join(cells, " | "))
	}
	r.rawLink(s, "teardown", len(st.runs))
}
