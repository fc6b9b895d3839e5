package e2e

// Benchmarks: pod start latency through berth (manifest written → both app
// containers started) against the same Docker calls made directly. Run with
//
//	go test -run '^$' -bench . -benchtime=10x ./test/e2e/

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"

	"github.com/berth-dev/berth/config"
	"github.com/berth-dev/berth/pause"
	"github.com/berth-dev/berth/runtime"
)

// debugBench (E2E_BENCH_DEBUG=1) logs each pod's create/start times.
var debugBench = os.Getenv("E2E_BENCH_DEBUG") != ""

// benchPod is the benchmark's two-container pod, without host ports.
func benchPod(name string) string {
	return podYAML(name,
		Ctr{Name: "web", Env: [][2]string{{"PORT", "8080"}}},
		Ctr{Name: "side", Env: [][2]string{{"PORT", "8081"}}},
	)
}

// report adds mean and median milliseconds per pod start.
func report(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(sum)/float64(len(ds)), "ms/pod")
	b.ReportMetric(ms(ds[len(ds)/2]), "p50-ms/pod")
	b.ReportMetric(ms(ds[len(ds)-1]), "max-ms/pod")
}

// BenchmarkPodStart times, per iteration, writing a one-pod two-container
// manifest until Docker reports both app containers started. Deleting the
// pod and waiting for its removal is not timed.
func BenchmarkPodStart(b *testing.B) {
	br := startBerth(b, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	args := filters.NewArgs(
		filters.Arg("type", string(events.ContainerEventType)),
		filters.Arg("event", "start"),
		filters.Arg("label", runtime.LabelNode+"="+br.Node),
	)
	msgs, errs := cli().Events(ctx, events.ListOptions{Filters: args})
	prefix := "bench-" + randHex(2)

	// Warm-up, untimed: the first pod may build the pause image.
	warm := prefix + "-warm"
	writeFile(b, br.Pods, warm+".yaml", benchPod(warm))
	waitPodRunning(b, br.Node, warm, "web", "side")
	removeFile(b, br.Pods, warm+".yaml")
	waitPodGone(b, br.Node, warm)

	var ds []time.Duration
	b.ResetTimer()
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("%s-%d", prefix, i)
		started := map[string]bool{}
		deadline := time.After(waitLong)
		b.StartTimer()
		t0 := time.Now()
		writeFile(b, br.Pods, name+".yaml", benchPod(name))
		for !started["web"] || !started["side"] {
			select {
			case m := <-msgs:
				if m.Actor.Attributes[runtime.LabelPodName] == name {
					started[m.Actor.Attributes[runtime.LabelContainerName]] = true
				}
			case err := <-errs:
				b.Fatalf("docker events: %v", err)
			case <-deadline:
				b.Fatalf("pod %s: app containers not started within %s (started: %v)", name, waitLong, started)
			}
		}
		ds = append(ds, time.Since(t0))
		b.StopTimer()
		ids := waitPodRunning(b, br.Node, name, "web", "side") // verify, untimed
		if debugBench {
			for _, n := range []string{"POD", "web", "side"} {
				c := inspect(b, ids[n])
				cr, _ := time.Parse(time.RFC3339Nano, c.Created)
				st, _ := time.Parse(time.RFC3339Nano, c.State.StartedAt)
				b.Logf("%s %s: created +%s started +%s", name, n, cr.Sub(t0).Round(time.Millisecond), st.Sub(t0).Round(time.Millisecond))
			}
			b.Logf("%s: observed +%s", name, ds[len(ds)-1].Round(time.Millisecond))
			if ds[len(ds)-1] > 1500*time.Millisecond {
				b.Logf("slow start at %s; berth log:\n%s", t0.Format(time.RFC3339Nano), br.LogText())
			}
		}
		removeFile(b, br.Pods, name+".yaml")
		waitPodGone(b, br.Node, name)
	}
	report(b, ds)
}

// ensurePauseImage makes sure berth's default pause image exists, building it
// from the program berth builds it from when absent.
func ensurePauseImage(b testing.TB) string {
	img := config.DefaultPauseImage()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ok, err := dk.ImagePresent(ctx, img)
	if err != nil {
		b.Fatal(err)
	}
	if !ok {
		pb, err := pause.Default()
		if err != nil {
			b.Fatal(err)
		}
		if pb.Exe != nil {
			err = dk.BuildImageData(ctx, img, pb.Exe, pb.Path, pb.Entrypoint)
		} else {
			err = dk.BuildImage(ctx, img, berthBin, pb.Path, pb.Entrypoint)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	return img
}

// BenchmarkDirectDocker is the baseline: the calls berth makes for a pod,
// made directly — create and start a sandbox from the pause image, then two
// app containers joined to its network namespace. Removal is not timed.
func BenchmarkDirectDocker(b *testing.B) {
	need(b)
	pause := ensurePauseImage(b)
	ctx := context.Background()
	prefix := "e2e-direct-" + runID + "-" + randHex(2)
	labels := func() map[string]string { return map[string]string{labelRun: runID} }
	var ids []string
	cleanup := func() {
		for i := len(ids) - 1; i >= 0; i-- {
			if err := dk.RemoveContainer(ctx, ids[i]); err != nil {
				b.Error(err)
			}
		}
		ids = ids[:0]
	}
	b.Cleanup(cleanup)
	run := func(cfg *runtime.ContainerConfig) string {
		id, err := dk.CreateContainer(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, id)
		if err := dk.StartContainer(ctx, id); err != nil {
			b.Fatal(err)
		}
		return id
	}

	var ds []time.Duration
	b.ResetTimer()
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		b.StartTimer()
		t0 := time.Now()
		sb := run(&runtime.ContainerConfig{Name: fmt.Sprintf("%s_POD_%d", prefix, i), Image: pause, Labels: labels(), Hostname: "direct"})
		for _, c := range []struct{ name, port string }{{"web", "8080"}, {"side", "8081"}} {
			run(&runtime.ContainerConfig{
				Name: fmt.Sprintf("%s_%s_%d", prefix, c.name, i), Image: testImage,
				Cmd: []string{"serve"}, Env: []string{"PORT=" + c.port},
				Labels: labels(), NetworkMode: "container:" + sb,
			})
		}
		ds = append(ds, time.Since(t0))
		b.StopTimer()
		cleanup()
	}
	report(b, ds)
}
