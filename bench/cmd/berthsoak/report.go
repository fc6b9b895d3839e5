package main

// The report: a Markdown summary on stdout and the samples as CSV.

import (
	"encoding/csv"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/berth-dev/berth/bench/internal/benchkit"
)

type results struct {
	began, ended         time.Time
	churnStart, churnEnd time.Time
	machine              benchkit.Machine
	loadEnd              string
	errors               []string

	initial        time.Duration // berth started → the initial pods exactly running
	convergence    time.Duration
	convergeBreaks int
	convergeErr    string
	stoppedAtEnd   int // containers of the node not running, after convergence

	kills   []*killResult
	stop    *stopResult
	hostile []*hostileFile
	crashes []string
	panics  int

	logLines int
	csvFile  string
}

// finishResults takes the kills' results under the lock they were
// written with.
func (s *soak) finishResults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.res.crashes = append(s.res.crashes, s.crashes...)
}

// ---------------------------------------------------------------- CSV

// resultFile is the CSV's path relative to the module root:
// soak-<commit7>-<machine>.csv.
func (s *soak) resultFile() string { return s.res.machine.ResultFile(s.opt.results, "soak") }

func (s *soak) writeCSV() (string, error) {
	rel := s.resultFile()
	path := rel
	if !filepath.IsAbs(rel) {
		path = filepath.Join(s.root, rel)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	rows := [][]string{{"t_s", "phase", "berth_state", "berth_starts", "pid", "rss_mib", "fds", "goroutines", "cpu_pct",
		"declared", "running_pods", "sandboxes", "apps", "stopped_ctrs", "counted", "settled",
		"orphan_ctrs", "missing", "extra", "orphan_pods", "missing_pods", "hostile_running", "needless_restarts", "ops"}}
	s.obs.mu.Lock()
	for _, m := range s.obs.samples {
		rss, fds, cpu, gor := "", "", "", ""
		if m.haveProc {
			rss, fds = fmt.Sprintf("%.1f", float64(m.rss)/(1<<20)), strconv.Itoa(m.fds)
		}
		if m.haveCPU {
			cpu = fmt.Sprintf("%.1f", m.cpuPct)
		}
		if m.haveGor {
			gor = fmt.Sprintf("%.0f", m.goroutines)
		}
		orphans, missing, extra := "", "", ""
		if m.counted {
			orphans, missing, extra = strconv.Itoa(m.orphanCtrs), strconv.Itoa(len(m.missing)), strconv.Itoa(len(m.extra))
		}
		rows = append(rows, []string{fmt.Sprintf("%.1f", m.t), m.phase, m.state, strconv.Itoa(m.starts), strconv.Itoa(m.pid),
			rss, fds, gor, cpu, strconv.Itoa(m.declared), strconv.Itoa(m.runningPods), strconv.Itoa(m.sandboxes),
			strconv.Itoa(m.apps), strconv.Itoa(m.stopped), strconv.FormatBool(m.counted), strconv.Itoa(m.settled),
			orphans, missing, extra, strings.Join(m.orphanPods, " "), strings.Join(m.missing, " "),
			strings.Join(m.hostileRan, " "), strconv.Itoa(m.needless), strconv.Itoa(m.ops)})
	}
	s.obs.mu.Unlock()
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	w := csv.NewWriter(f)
	err = w.WriteAll(rows)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return rel, err
}

// ---------------------------------------------------------------- Markdown

// stat is the mean and max of a series.
type stat struct {
	mean, max float64
	n         int
}

func statOf(xs []float64) stat {
	st := stat{max: math.Inf(-1)}
	for _, x := range xs {
		st.mean += x
		st.max = math.Max(st.max, x)
	}
	st.n = len(xs)
	if st.n > 0 {
		st.mean /= float64(st.n)
	}
	return st
}

func (st stat) String() string {
	if st.n == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f / %.1f", st.mean, st.max)
}

func (s *soak) markdown() string {
	r := s.res
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	o := s.obs
	o.mu.Lock()
	defer o.mu.Unlock()

	p("## berth soak: the watched pods directory under churn\n\n")
	p("| | |\n|---|---|\n")
	p("| Date | %s (the run took %s) |\n", r.machine.Date, r.ended.Sub(r.began).Round(time.Second))
	p("| Machine | nproc %d, %s memory, CPU %s; kernel %s |\n", r.machine.NProc, r.machine.Mem, r.machine.CPU, r.machine.Kernel)
	p("| Docker | %s |\n", r.machine.Docker)
	p("| Go, berth | %s, commit %s |\n", r.machine.GoVersion, r.machine.Commit)
	p("| Command | `go run ./bench/cmd/berthsoak %s` (seed %d) |\n", s.opt.args, s.opt.seed)
	p("| Shared machine | load average %s at the start, %s at the end; %d containers of other work running at the start |\n",
		r.machine.LoadStart, r.loadEnd, r.machine.OthersRunning)
	if r.csvFile != "" {
		p("| Samples | [%s](%s), every %s |\n", r.csvFile, r.csvFile, s.opt.sample)
	}
	p("\n")

	// Windows.
	w := min(s.opt.window, s.opt.duration/2)
	churnLen := r.churnEnd.Sub(r.churnStart).Seconds()
	var first, last [3][]float64
	for _, m := range o.samples {
		if m.phase != "churn" {
			continue
		}
		for k, win := range []*[3][]float64{&first, &last} {
			in := m.t < w.Seconds()
			if k == 1 {
				in = m.t >= churnLen-w.Seconds()
			}
			if !in {
				continue
			}
			if m.haveProc {
				win[0] = append(win[0], float64(m.rss)/(1<<20))
				win[1] = append(win[1], float64(m.fds))
			}
			if m.haveGor {
				win[2] = append(win[2], m.goroutines)
			}
		}
	}
	needless := 0
	for _, e := range o.restarts {
		if e.needless {
			needless++
		}
	}
	maxOrph, maxMiss, maxExtra, counted := 0, 0, 0, 0
	var orphAt, missAt string
	for _, m := range o.samples {
		if !m.counted {
			continue
		}
		counted++
		if m.orphanCtrs > maxOrph {
			maxOrph, orphAt = m.orphanCtrs, fmt.Sprintf("t=%.0fs %s", m.t, strings.Join(m.orphanPods, " "))
		}
		if len(m.missing) > maxMiss {
			maxMiss, missAt = len(m.missing), fmt.Sprintf("t=%.0fs %s", m.t, strings.Join(m.missing, " "))
		}
		maxExtra = max(maxExtra, len(m.extra))
	}
	// Orphans after the kills: distinct pods, and the restarts that had any.
	killOrphanPods, killsWithOrphans := map[string]bool{}, 0
	for _, k := range r.kills {
		for _, pod := range k.orphans {
			killOrphanPods[pod] = true
		}
		if len(k.orphans) > 0 {
			killsWithOrphans++
		}
	}
	killOrphans := len(killOrphanPods)
	verdict := func(ok bool) string {
		if ok {
			return "**met**"
		}
		return "**not met**"
	}
	p("| Goal | Target | Measured | Verdict |\n|---|---|---|---|\n")
	p("| No growth: RSS, MiB (mean / max) | last %s ≈ first %s | first %s, last %s | reported |\n", w, w, statOf(first[0]), statOf(last[0]))
	p("| No growth: open fds (mean / max) | last ≈ first | first %s, last %s | reported |\n", statOf(first[1]), statOf(last[1]))
	p("| No growth: goroutines (mean / max) | last ≈ first | first %s, last %s | reported |\n", statOf(first[2]), statOf(last[2]))
	if r.convergeErr != "" {
		p("| Convergence after the churn stops | ≤ 2 s from the last change to exactly the declared set | none: %s | **not met** |\n", r.convergeErr)
	} else {
		p("| Convergence after the churn stops | ≤ 2 s from the last change to exactly the declared set | %s (polled every 50 ms; held 5 s%s) | %s |\n",
			r.convergence.Round(time.Millisecond), breaksNote(r.convergeBreaks), verdict(r.convergence <= 2*time.Second))
	}
	p("| Needless restarts | 0 (a pod whose spec did not change got new containers) | %d | %s |\n", needless, verdict(needless == 0))
	p("| Orphans past the settle time | 0 containers of undeclared pods, %s after the pod's last change and berth's readiness | max %d%s, in %d counted samples | %s |\n",
		s.opt.settle, maxOrph, atNote(orphAt), counted, verdict(maxOrph == 0))
	p("| Orphans %s after sync, per kill -9 | 0 pods whose containers run though no file declares them, %s after /readyz | %d distinct pods, at %d of %d restarts | %s |\n",
		s.opt.settle, s.opt.settle, killOrphans, killsWithOrphans, len(r.kills), verdict(killOrphans == 0))
	p("| Missing past the settle time | declared pods without a running sandbox and app | max %d%s (extra containers: max %d) | reported |\n", maxMiss, atNote(missAt), maxExtra)
	hostileN := 0
	for _, h := range r.hostile {
		if h.name != "" {
			hostileN++
		}
	}
	p("| Hostile files never run | 0 of their pods seen running, no duplicate's spec running | %d seen (of %d hostile files) | %s |\n",
		len(o.hostileRan), hostileN, verdict(len(o.hostileRan) == 0))
	p("| berth never exits on its own | 0 exits, 0 panics in its log | %d exits, %d panics | %s |\n",
		len(r.crashes), r.panics, verdict(len(r.crashes) == 0 && r.panics == 0))
	p("\n")

	// Operations.
	s.led.mu.Lock()
	kinds := make([]string, 0, len(s.led.ops))
	for k := range s.led.ops {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var ops []string
	for _, k := range kinds {
		ops = append(ops, fmt.Sprintf("%s %d", k, s.led.ops[k]))
	}
	declaredEnd := s.led.declaredCount()
	opsDone := maps.Clone(s.led.ops)
	s.led.mu.Unlock()
	p("Churn: %s from %d pods (%d declared at the end), one operation every %s: %s. The initial %d pods ran %s after berth started.\n\n",
		r.churnEnd.Sub(r.churnStart).Round(time.Second), s.opt.pods, declaredEnd, s.opt.interval, strings.Join(ops, ", "),
		s.opt.pods, r.initial.Round(time.Millisecond))

	p("**Needless restarts** (%d; containers replaced while the pod's generation stayed):\n\n", needless)
	if len(o.restarts) == 0 {
		p("none.\n\n")
	} else {
		p("| t (s) | pod | what | class | generation | last operation on its file | across a kill -9 |\n|---|---|---|---|---|---|---|\n")
		for _, e := range o.restarts {
			p("| %.0f | %s | %s | %s | %s → %s | %s | %v |\n", e.at.Sub(r.churnStart).Seconds(), e.pod, e.what, e.class,
				e.oldGen, e.newGen, orNone(e.lastOp), e.acrossRestart)
		}
		p("\n")
	}
	byOp := map[string]int{}
	for _, e := range o.restarts {
		if e.lastOpKind != "" {
			byOp[e.lastOpKind]++
		}
	}
	var kept []string
	for _, k := range []string{"rename", "replace-same", "rewrite/trunc-write", "rewrite/trunc-pause-write", "rewrite/empty-close-write"} {
		kept = append(kept, fmt.Sprintf("%s %d of %d", k, byOp[k], opsDone[k]))
	}
	p("Needless restarts after an operation that kept the spec, by operation: %s.\n\n", strings.Join(kept, ", "))
	p("Spec changes seen carried out (edits and changed replaces; a pod added again after a delete is left out): %d replaced the app alone, as an env change should; %d replaced the sandbox too, the pod torn down%s.\n\n",
		o.changeAppOnly, o.changeSandbox, podsNote(o.changeSandboxPods))

	p("**kill -9** (%d):\n\n", len(r.kills))
	if len(r.kills) > 0 {
		p("| t (s) | around the restart | pod | kill → ready | orphans %s after ready | missing then | orphans gone after ready |\n|---|---|---|---|---|---|---|\n", s.opt.settle)
		for i, k := range r.kills {
			gone := "–"
			switch {
			case k.clearedNot:
				gone = "not within 3 min"
			case k.cleared > 0:
				gone = k.cleared.Round(10 * time.Millisecond).String()
			}
			var orphans []string
			for _, pod := range k.orphans {
				orphans = append(orphans, pod+carriedFrom(r, i, pod))
			}
			p("| %.0f | %s | %s | %s | %s | %s | %s |\n", k.at.Sub(r.churnStart).Seconds(), k.mode, orNone(k.pod),
				k.readyAfter.Round(time.Millisecond), listOrNone(orphans), listOrNone(k.missing), gone)
		}
		p("\n")
	}
	if st := r.stop; st != nil {
		p("**SIGSTOP** at t=%.0fs for %s (%d operations meanwhile); see the samples after it.\n\n",
			st.at.Sub(r.churnStart).Seconds(), st.dur.Round(time.Millisecond), st.ops)
	}

	p("**Hostile files** (%d, each %s in the directory; berth's log has %d lines):\n\n", hostileN, s.opt.hostileLife, r.logLines)
	p("| file | kind | named in berth's log |\n|---|---|---|\n")
	named, expect := 0, 0
	for _, h := range r.hostile {
		if h.name == "" {
			continue
		}
		yes := "no"
		if h.namedInLog {
			yes = "yes"
		}
		if h.silent {
			yes += " (hidden: skipped silently, as the kubelet does)"
		} else {
			expect++
			if h.namedInLog {
				named++
			}
		}
		p("| `%s` | %s | %s |\n", h.name, h.kind, yes)
	}
	p("\n%d of the %d files that should be named are.", named, expect)
	if len(o.hostileRan) > 0 {
		var ran []string
		for pod := range o.hostileRan {
			ran = append(ran, pod)
		}
		sort.Strings(ran)
		p(" **Seen running**: %s.", strings.Join(ran, ", "))
	}
	p("\n\n")
	if len(r.crashes) > 0 {
		p("**berth exited on its own**: %s.\n\n", strings.Join(r.crashes, "; "))
	}
	p("After convergence %d containers of the node were not running (kept exited containers).\n", r.stoppedAtEnd)
	if len(r.errors) > 0 {
		p("\nErrors: %s\n", strings.Join(r.errors, "; "))
	}
	return b.String()
}

// carriedFrom notes when the i-th kill's orphan pod was already an orphan
// after an earlier kill and not gone since.
func carriedFrom(r *results, i int, pod string) string {
	for _, j := range r.kills[:i] {
		if !slices.Contains(j.orphans, pod) {
			continue
		}
		gone := j.at.Add(j.readyAfter).Add(j.cleared)
		if j.clearedNot || j.cleared == 0 || gone.After(r.kills[i].at) {
			return fmt.Sprintf(" (still, from t=%.0fs)", j.at.Sub(r.churnStart).Seconds())
		}
	}
	return ""
}

func breaksNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; it ran and broke %d times first", n)
}

func atNote(at string) string {
	if at == "" {
		return ""
	}
	return " (" + at + ")"
}

func podsNote(pods []string) string {
	if len(pods) == 0 {
		return ""
	}
	if len(pods) > 8 {
		return fmt.Sprintf(" (%s, …)", strings.Join(pods[:8], ", "))
	}
	return " (" + strings.Join(pods, ", ") + ")"
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, " ")
}
