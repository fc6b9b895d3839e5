// Command berthbench measures berth on the real Docker engine against the
// physical limit (the same Docker calls made directly) and against
// docker-compose, and writes the results to a Markdown file:
//
//	go run ./bench/cmd/berthbench -out BENCHMARKS.md
//
// See bench/README.md for the scenarios and the flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docker/docker/client"

	"github.com/berth-dev/berth/bench/internal/benchkit"
	"github.com/berth-dev/berth/config"
	"github.com/berth-dev/berth/runtime"
)

const (
	testImage = benchkit.TestImage
	// Labels on the containers the bench creates itself (direct and
	// compose baselines); deliberately outside berth's io.berth. prefix.
	labelRun  = "berthbench.run"
	labelCase = "berthbench.case"
)

type options struct {
	out        string
	ns         []int
	runs       int
	trials     int
	idlePods   int
	idleWindow time.Duration
	settle     time.Duration
	workers    int
	// directWorkers are the concurrencies of the direct-baseline sweep.
	directWorkers []int
	portBase      int
	compose       string
	scenarios     map[string]bool
	updates       int
	// footprintPods and footprintSettle size the sandbox and footprint
	// scenarios.
	footprintPods   int
	footprintSettle time.Duration
	keep            bool
	// results is the directory, relative to the module root, of the raw
	// rows' CSV files ("": not written).
	results string
	args    string // the command line, for the report
}

// bench is the state shared by the scenarios.
type bench struct {
	opt        options
	id         string // unique per invocation; in node names, labels, projects
	root       string // module root
	work       string // temp dir: binaries, pod dirs, logs, compose files
	berthBin   string
	dockerHost string
	dk         *runtime.Docker
	cli        *client.Client
	pauseImage string
	// tmpl is the warm-up berth's pod, cloned by the berth-config
	// baseline under its own node name and root dir.
	tmpl             *podTemplate
	cfgNode, cfgRoot string

	engineBreaks atomic.Int64 // dockerd restarts seen (monitorEngine)

	mu       sync.Mutex
	nodes    []string            // every berth node name used, for the sweep
	procs    map[*berthProc]bool // running berth processes
	projects map[string]string   // compose project → file, not yet taken down
}

// allScenarios are the scenarios in the order they run.
var allScenarios = []string{"start", "teardown", "reaction", "idle", "sandbox", "footprint", "inmem", "linear", "configmap"}

// pairedScenario names the scenario measured in the same runs as another:
// asking for either runs both.
var pairedScenario = map[string]string{"start": "teardown", "sandbox": "footprint"}

func main() { benchkit.Main("berthbench", parseFlags, run) }

func run(ctx context.Context, opt options) int {
	b := &bench{opt: opt, id: benchkit.RandHex(3), procs: map[*berthProc]bool{}, projects: map[string]string{}}
	res := &results{began: time.Now()}
	defer b.cleanup()
	if err := b.setup(ctx); err != nil {
		logf("setup failed: %v", err)
		return 1
	}
	res.machine = b.machine(ctx)
	res.pauseImage = b.pauseImage
	mctx, stopMonitor := context.WithCancel(ctx)
	defer stopMonitor()
	go b.monitorEngine(mctx)

	type scenario struct {
		name string
		run  func(context.Context, *results) error
	}
	for _, s := range []scenario{
		{"start", b.runStart}, // and teardown: one cycle measures both
		{"reaction", b.runReaction},
		{"idle", b.runIdle},
		{"sandbox", b.runFootprint}, // and footprint: one set of pods measures both
		{"inmem", b.runInMemory},
		{"linear", b.runLinear},
		{"configmap", b.runConfigMap},
	} {
		if !opt.scenarios[s.name] && !opt.scenarios[pairedScenario[s.name]] {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		logf("== scenario %s", s.name)
		t := time.Now()
		if err := s.run(ctx, res); err != nil {
			logf("scenario %s failed: %v", s.name, err)
			res.errors = append(res.errors, fmt.Sprintf("%s: %v", s.name, err))
		}
		b.sweep() // whatever a failed scenario left behind
		logf("== scenario %s done in %s", s.name, time.Since(t).Round(time.Second))
	}
	res.ended = time.Now()
	res.engineBreaks = b.engineBreaks.Load()
	res.loadEnd = benchkit.Loadavg()
	if ctx.Err() != nil {
		logf("interrupted; not writing %s", opt.out)
		return 130
	}
	if opt.results != "" {
		files, err := res.writeRaw(b.root, opt)
		if err != nil {
			logf("write raw rows: %v", err)
			return 1
		}
		res.rawFiles = files
	}
	md := res.markdown(opt)
	if opt.out != "-" {
		md += keptSections(opt.out)
	}
	if opt.out == "-" {
		fmt.Print(md)
	} else {
		tmp := opt.out + ".tmp"
		if err := os.WriteFile(tmp, []byte(md), 0o644); err != nil {
			logf("write: %v", err)
			return 1
		}
		if err := os.Rename(tmp, opt.out); err != nil {
			logf("write: %v", err)
			return 1
		}
		logf("wrote %s (%s in all)", opt.out, res.ended.Sub(res.began).Round(time.Second))
	}
	if len(res.errors) > 0 {
		return 1
	}
	return 0
}

// keptSections returns the sections of the report at path that berthbench
// does not write (from the heading "## 5." on: runs of other benchmarks,
// written by hand), so that a new run keeps them.
func keptSections(path string) string {
	old, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	s := string(old)
	if strings.HasPrefix(s, "## 5.") {
		return "\n" + s
	}
	if i := strings.Index(s, "\n## 5."); i >= 0 {
		return s[i:]
	}
	return ""
}

func parseFlags() (options, error) {
	var o options
	ns := flag.String("n", "1,10,50,100", "pod counts of the start and teardown scenarios")
	sc := flag.String("scenarios", strings.Join(allScenarios, ","), "scenarios to run (comma-separated)")
	flag.IntVar(&o.footprintPods, "footprint-pods", 100, "idle pods of the sandbox and footprint scenarios")
	flag.DurationVar(&o.footprintSettle, "footprint-settle", 10*time.Second, "wait after the footprint pods run, before measuring")
	flag.IntVar(&o.updates, "updates", 100, "ConfigMap updates in the configmap scenario")
	flag.StringVar(&o.out, "out", "BENCHMARKS.md", `Markdown report to write ("-": stdout)`)
	flag.IntVar(&o.runs, "rounds", 3, "rounds per pod count of the start and teardown scenarios (each runs every system once)")
	flag.IntVar(&o.runs, "runs", 3, "the same as -rounds")
	flag.IntVar(&o.trials, "trials", 10, "trials per reaction kind (kill, rm, Docker-only)")
	flag.IntVar(&o.idlePods, "idle-pods", 100, "pods running during the idle measurement")
	flag.DurationVar(&o.idleWindow, "idle-window", time.Minute, "idle measurement window")
	flag.DurationVar(&o.settle, "settle", 10*time.Second, "wait after the idle pods run, before the window")
	flag.IntVar(&o.workers, "workers", 4, "concurrency of the direct baseline (berth's controller.workers default)")
	dw := flag.String("direct-workers", "1,2,4,8,16", "concurrencies of the direct-baseline sweep at the largest -n (empty: none)")
	flag.IntVar(&o.portBase, "port-base", 20000, "first host port the benchmark pods publish (pod i: port-base+i)")
	flag.StringVar(&o.compose, "compose", "docker-compose", "docker-compose executable (baseline skipped when absent)")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (berth logs, compose files)")
	flag.StringVar(&o.results, "results", "bench/results", `directory (relative: under the module root) for the raw rows as CSV ("": none)`)
	flag.Parse()
	o.args = strings.Join(os.Args[1:], " ")
	for _, f := range strings.Split(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-n: bad pod count %q", f)
		}
		o.ns = append(o.ns, n)
	}
	for _, f := range strings.Split(*dw, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return o, fmt.Errorf("-direct-workers: bad concurrency %q", f)
		}
		o.directWorkers = append(o.directWorkers, n)
	}
	o.scenarios = map[string]bool{}
	for _, s := range strings.Split(*sc, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(allScenarios, s) {
			return o, fmt.Errorf("-scenarios: unknown %q (known: %s)", s, strings.Join(allScenarios, ","))
		}
		o.scenarios[s] = true
	}
	if o.runs < 1 || o.trials < 1 || o.idlePods < 1 || o.workers < 1 || o.idleWindow <= 0 || o.footprintPods < 1 {
		return o, errors.New("-rounds, -trials, -idle-pods, -footprint-pods, -workers and -idle-window must be positive")
	}
	return o, nil
}

// setup builds berth and testapp (CGO_ENABLED=0), connects to the engine,
// builds the test image and makes sure berth's pause image exists.
func (b *bench) setup(ctx context.Context) error {
	su, err := benchkit.Prepare(ctx, "berthbench", true, logf)
	b.root, b.work, b.berthBin, b.dockerHost, b.dk, b.cli = su.Root, su.Work, su.BerthBin, su.DockerHost, su.Docker, su.Client
	if err != nil {
		return err
	}
	logf("work dir %s, run id %s", b.work, b.id)
	most := max(b.opt.idlePods, 2*b.opt.trials, b.opt.footprintPods)
	for _, n := range b.opt.ns {
		most = max(most, n)
	}
	if err := b.checkPorts(most); err != nil {
		return err
	}
	return b.warmUp(ctx)
}

// warmUp runs one pod through a berth, which builds berth's pause image
// when it is absent and warms the engine's caches, and keeps that pod's
// containers as the berth-config baseline's template. The pause image of
// every baseline is the one berth's sandbox runs.
func (b *bench) warmUp(ctx context.Context) error {
	logf("warm-up berth run (ensures the pause image, %s by default)", config.DefaultPauseImage())
	bp, err := b.startBerth(ctx, b.node("warm"), nil)
	if err != nil {
		return err
	}
	defer b.finishBerth(bp)
	w, err := b.watch(ctx, time.Now(), map[string]string{nodeLabel: bp.node}, "start")
	if err != nil {
		return err
	}
	if err := bp.writePod(bp.podName(0), podYAML(bp.podName(0), b.hostPort(0))); err != nil {
		return err
	}
	if _, err := w.waitStarts(ctx, 2, 2*time.Minute); err != nil {
		return fmt.Errorf("warm-up pod: %w\n%s", err, bp.logTail())
	}
	if b.tmpl, err = b.captureTemplate(ctx, bp.node, bp.podName(0), bp.root); err != nil {
		return err
	}
	b.pauseImage = b.tmpl.image()
	b.cfgNode = b.node("cfg")
	b.cfgRoot = filepath.Join(b.work, "cfg-root")
	logf("pause image %s (berth's sandbox)", b.pauseImage)
	return os.MkdirAll(b.cfgRoot, 0o750)
}

// repeat runs f, up to 3 times while it fails: most failures on a shared
// machine are restarts of dockerd by other work, which kill the containers
// being measured. Each failed attempt is noted for the report.
func (b *bench) repeat(ctx context.Context, res *results, what string, f func() error) error {
	for attempt := 1; ; attempt++ {
		if err := b.waitEngine(ctx, 2*time.Minute); err != nil {
			return err
		}
		gen := b.engineBreaks.Load()
		err := f()
		if err == nil {
			err = b.disturbed(gen)
		}
		if err == nil || ctx.Err() != nil || attempt == 3 {
			return err
		}
		res.repeated = append(res.repeated, fmt.Sprintf("%s, attempt %d: %s", what, attempt, firstLine(err.Error())))
		logf("%s failed, repeating: %s", what, firstLine(err.Error()))
		if err := benchkit.SleepCtx(ctx, 2*time.Second); err != nil {
			return err
		}
	}
}

// node returns a berth node name unique to this invocation.
// hostPort is the host port pod i of any scenario and system publishes.
func (b *bench) hostPort(i int) int { return b.opt.portBase + i }

// checkPorts fails when a host port the pods will publish is taken.
func (b *bench) checkPorts(n int) error {
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", fmt.Sprintf(":%d", b.hostPort(i)))
		if err != nil {
			return fmt.Errorf("host port %d is taken (choose another -port-base): %w", b.hostPort(i), err)
		}
		ln.Close()
	}
	return nil
}

func (b *bench) node(what string) string {
	n := "bb-" + b.id + "-" + what
	b.mu.Lock()
	b.nodes = append(b.nodes, n)
	b.mu.Unlock()
	return n
}

// cleanup stops every berth still running, takes down compose projects and
// removes every container this invocation created. It runs on every exit.
func (b *bench) cleanup() {
	b.mu.Lock()
	var procs []*berthProc
	for p := range b.procs {
		procs = append(procs, p)
	}
	b.mu.Unlock()
	for _, p := range procs {
		p.stop()
	}
	if b.cli != nil {
		b.sweep()
		b.dk.Close()
	}
	if b.work != "" {
		if b.opt.keep {
			logf("kept work dir %s", b.work)
		} else {
			os.RemoveAll(b.work)
		}
	}
}

// sweep removes all containers labelled with this run or one of its nodes,
// and any compose project not taken down yet.
func (b *bench) sweep() {
	ctx, cancel := cleanupCtx()
	defer cancel()
	b.mu.Lock()
	sets := []map[string]string{{labelRun: b.id}}
	for _, n := range b.nodes {
		sets = append(sets, map[string]string{nodeLabel: n})
	}
	projects := make(map[string]string, len(b.projects))
	for p, f := range b.projects {
		projects[p] = f
	}
	b.mu.Unlock()
	for _, m := range sets {
		if n, err := b.removeAll(ctx, m); err != nil {
			logf("sweep %v: %v", m, err)
		} else if n > 0 {
			logf("sweep: removed %d leftover containers %v", n, m)
		}
	}
	for p, f := range projects {
		b.composeDown(ctx, p, f)
	}
}

func logf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "%s berthbench: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// cleanupCtx bounds cleanup work, which must run even after an interrupt.
func cleanupCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 2*time.Minute)
}
