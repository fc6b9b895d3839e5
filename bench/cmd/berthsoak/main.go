// Command berthsoak runs berth for a long time under a churning pods
// directory (edits, atomic replaces, in-place rewrites, deletes, adds,
// renames, hostile files), kills it with SIGKILL now and then, stops it
// once with SIGSTOP, and reports whether berth stays flat (memory, fds,
// goroutines), keeps the containers equal to the declared pods, restarts no
// pod needlessly, and converges once the churn stops:
//
//	go run ./bench/cmd/berthsoak            # 20 minutes, from the repository root
//
// See bench/README.md for the method and the flags. It prints a Markdown
// summary and writes one CSV row per sample to bench/results.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/client"

	"github.com/berth-dev/berth/bench/internal/benchkit"
	"github.com/berth-dev/berth/runtime"
)

const testImage = benchkit.TestImage

type options struct {
	duration, interval, sample, settle, window time.Duration
	stopFor, hostileLife, convergeTimeout      time.Duration
	pods, kills, hostile                       int
	seed                                       uint64
	results, out                               string
	keep, buildImage                           bool
	args                                       string
}

// soak is the state of one run. The churn loop alone changes the pods
// directory and the berth process; the sampler reads them.
type soak struct {
	opt        options
	id         string // unique per invocation: in the node name and pod names
	node       string
	prefix     string // of every pod name of this run
	root, work string
	podsDir    string
	rootDir    string
	logPath    string
	ops        *os.File // ops.log: every operation, with its time
	berthBin   string
	dockerHost string
	port       int
	dk         *runtime.Docker
	cli        *client.Client
	rng        *mrand.Rand

	led *ledger
	obs *observer

	mu      sync.Mutex
	proc    *berthProc
	state   berthState
	starts  int       // berth processes started
	upSince time.Time // last /readyz 200 after a start, or SIGCONT
	crashes []string  // exits nobody asked for, with the log's tail
	// stopDone is closed when the SIGSTOP is over, or when the churn ended
	// without one.
	stopDone chan struct{}

	res *results
}

// berthState is what the harness is doing to berth.
type berthState int

const (
	berthUp berthState = iota
	berthDown
	berthStopped
)

func main() { benchkit.Main("berthsoak", parseFlags, run) }

func run(ctx context.Context, opt options) int {
	id := benchkit.RandHex(3)
	s := &soak{opt: opt, id: id, node: "soak-" + id, prefix: "sk" + id,
		rng: mrand.New(mrand.NewPCG(opt.seed, opt.seed^0x5eed)), stopDone: make(chan struct{})}
	s.res = &results{began: time.Now()}
	defer s.cleanup()
	if err := s.setup(ctx); err != nil {
		logf("setup failed: %v", err)
		return 1
	}
	s.res.machine = benchkit.ReadMachine(ctx, s.cli, s.root)
	if err := s.soak(ctx); err != nil {
		logf("soak failed: %v", err)
		s.res.errors = append(s.res.errors, err.Error())
	}
	s.res.ended = time.Now()
	s.res.loadEnd = benchkit.Loadavg()
	if ctx.Err() != nil {
		logf("interrupted; no report")
		return 130
	}
	s.finishResults()
	if opt.results != "" {
		rel, err := s.writeCSV()
		if err != nil {
			logf("write CSV: %v", err)
			return 1
		}
		s.res.csvFile = rel
	}
	md := s.markdown()
	if opt.out == "-" {
		fmt.Print(md)
	} else {
		if err := os.WriteFile(opt.out, []byte(md), 0o644); err != nil {
			logf("write %s: %v", opt.out, err)
			return 1
		}
		fmt.Print(md)
		logf("wrote %s", opt.out)
	}
	if len(s.res.errors) > 0 {
		return 1
	}
	return 0
}

func parseFlags() (options, error) {
	var o options
	flag.DurationVar(&o.duration, "duration", 20*time.Minute, "how long the churn runs")
	flag.IntVar(&o.pods, "pods", 60, "pod files at the start (one pod per file); adds and deletes keep the count near it")
	flag.DurationVar(&o.interval, "interval", 2*time.Second, "one operation on the pods directory every interval")
	flag.IntVar(&o.kills, "kills", 5, "kill -9s of berth, spread over the run")
	flag.DurationVar(&o.stopFor, "stop-for", 3*time.Second, "how long berth is held by its one SIGSTOP (0: none)")
	flag.IntVar(&o.hostile, "hostile", len(hostileKinds), "hostile files, spread over the run, kinds in turn (the default: each kind once)")
	flag.DurationVar(&o.hostileLife, "hostile-life", 20*time.Second, "how long a hostile file stays in the directory")
	flag.DurationVar(&o.sample, "sample", 5*time.Second, "sampling period")
	flag.DurationVar(&o.settle, "settle", 2*time.Second, "a pod is checked against the containers only this long after its last change and after berth's /readyz")
	flag.DurationVar(&o.window, "window", 5*time.Minute, "first and last windows compared for memory, fds and goroutines (at most half the run)")
	flag.DurationVar(&o.convergeTimeout, "converge-timeout", 3*time.Minute, "give up waiting for convergence after the churn")
	flag.Uint64Var(&o.seed, "seed", 0, "random seed of the operations (0: from the clock; the report prints it)")
	flag.StringVar(&o.results, "results", "bench/results", `directory (relative: under the module root) for the samples as CSV ("": none)`)
	flag.StringVar(&o.out, "out", "-", `also write the Markdown summary to this file ("-": stdout only)`)
	flag.BoolVar(&o.buildImage, "build-image", true, "build "+testImage+" from test/testapp first (as the e2e harness does)")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (berth's log, pods dir)")
	flag.Parse()
	var args []string
	for _, a := range os.Args[1:] {
		if a == "" || strings.ContainsAny(a, " '\"") {
			a = strconv.Quote(a)
		}
		args = append(args, a)
	}
	o.args = strings.Join(args, " ")
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano())
	}
	switch {
	case o.duration <= 0 || o.interval <= 0 || o.sample <= 0 || o.settle < 0 || o.window <= 0:
		return o, errors.New("-duration, -interval, -sample and -window must be positive, -settle not negative")
	case o.pods < 2:
		return o, errors.New("-pods must be at least 2")
	case o.kills < 0 || o.hostile < 0 || o.stopFor < 0:
		return o, errors.New("-kills, -hostile and -stop-for must not be negative")
	}
	return o, nil
}

// setup builds berth and testapp, connects to the engine, builds the test
// image and makes the work directories.
func (s *soak) setup(ctx context.Context) error {
	su, err := benchkit.Prepare(ctx, "berthsoak", s.opt.buildImage, logf)
	s.root, s.work, s.berthBin, s.dockerHost, s.dk, s.cli = su.Root, su.Work, su.BerthBin, su.DockerHost, su.Docker, su.Client
	if err != nil {
		return err
	}
	s.podsDir = filepath.Join(s.work, "pods")
	s.rootDir = filepath.Join(s.work, "root")
	s.logPath = filepath.Join(s.work, "berth.log")
	for _, d := range []string{s.podsDir, s.rootDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	if s.ops, err = os.Create(filepath.Join(s.work, "ops.log")); err != nil {
		return err
	}
	logf("work dir %s, node %s, seed %d", s.work, s.node, s.opt.seed)
	if s.port, err = benchkit.FreePort(); err != nil {
		return err
	}
	s.led = newLedger(s.prefix)
	s.obs = newObserver(s)
	return nil
}

// cleanup stops berth and removes every container of this run's node. It
// runs on every exit.
func (s *soak) cleanup() {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p != nil {
		p.stop()
	}
	if s.cli != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		n, err := s.removeAll(ctx)
		cancel()
		if err != nil {
			logf("remove containers of %s: %v", s.node, err)
		} else if n > 0 {
			logf("removed %d containers of node %s", n, s.node)
		}
		s.dk.Close()
	}
	if s.ops != nil {
		s.ops.Close()
	}
	if s.work != "" {
		if s.opt.keep {
			logf("kept work dir %s", s.work)
		} else {
			_ = os.RemoveAll(s.work)
		}
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s berthsoak: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// sleepUntil waits until t or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	if d := time.Until(t); d > 0 {
		return benchkit.SleepCtx(ctx, d)
	}
	return ctx.Err()
}
