package e2e

// The watched pods directory under churn, as operators and config tools
// use it: renames, in-place rewrites, a file declaring a pod another file
// already runs, deletions while berth restarts, and files that declare
// nothing. Each pod here is one "sleep" container (it exits on SIGTERM)
// with a grace period of 1 s.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/runtime"
)

// churnPod is a pod of one app container, "sleep", its env MARK=mark (a
// different mark is a different spec).
func churnPod(name, mark string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: app
      image: %q
      args: ["sleep"]
      env:
        - name: MARK
          value: %q
`, name, testImage, mark)
}

// churnPodRunning writes name's file (atomically) and waits for the pod to
// run, returning its container IDs.
func churnPodRunning(t *testing.T, b *Berth, file, name, mark string) map[string]string {
	t.Helper()
	writeFile(t, b.Pods, file, churnPod(name, mark))
	return waitPodRunning(t, b.Node, name, "app")
}

// logFrom is what berth logged from offset off (a len of LogText) on.
func logFrom(b *Berth, off int) string {
	text := b.LogText()
	if off > len(text) {
		return ""
	}
	return text[off:]
}

// namesPod reports whether a log line names pod default/name (and not a
// pod whose name only starts with it).
func namesPod(line, name string) bool {
	for rest := line; ; {
		i := strings.Index(rest, "default/"+name)
		if i < 0 {
			return false
		}
		rest = rest[i+len("default/"+name):]
		if rest == "" || strings.ContainsRune(" \"',]}", rune(rest[0])) {
			return true
		}
	}
}

// teardownLines are the lines of text that tell pod name was taken down:
// removed from its source, or its containers stopped.
func teardownLines(text, name string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if !namesPod(line, name) {
			continue
		}
		if strings.Contains(line, "removed from its source") || strings.Contains(line, "stopping containers") || strings.Contains(line, "pod deleted") {
			out = append(out, line)
		}
	}
	return out
}

// linesWith are the lines of text that contain every part.
func linesWith(text string, parts ...string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		ok := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				ok = false
				break
			}
		}
		if ok && !strings.HasPrefix(line, "=== e2e:") {
			out = append(out, line)
		}
	}
	return out
}

// keepsRunning checks for d that pod keeps running exactly the containers
// want (name → ID), as assertStable does, and fails saying what was done
// to it, with the lines of berth's log from offset off on that tell it was
// taken down.
func keepsRunning(t *testing.T, b *Berth, off int, pod string, want map[string]string, d time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		list := podContainers(t, b.Node, pod)
		ids, ok := exactlyOne(list, []string{"POD", "app"})
		if !ok || len(list) != len(want) || ids["POD"] != want["POD"] || ids["app"] != want["app"] {
			t.Fatalf("%s: pod %s does not run its containers POD %.12s, app %.12s any more; it has %s; berth logged:\n%s",
				what, pod, want["POD"], want["app"], describe(list), strings.Join(teardownLines(logFrom(b, off), pod), "\n"))
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// assertRestartCount checks that every container of pod carries the
// restart count label want.
// goneAcrossRestart runs pods <prefix>-gone and <prefix>-kept, kills
// berth and calls restart, which starts it again and removes the gone
// pod's file (goneFile, in b.Pods) at its moment. The gone pod must have no
// container running 3 s later (2 s after sync plus its 1 s grace) and be
// removed; the kept one must stay untouched.
func goneAcrossRestart(t *testing.T, b *Berth, prefix string, restart func(goneFile string)) {
	t.Helper()
	gone, kept := prefix+"-gone", prefix+"-kept"
	churnPodRunning(t, b, gone+".yaml", gone, "g")
	keptIDs := churnPodRunning(t, b, kept+".yaml", kept, "k")
	b.Kill(t)
	restart(gone + ".yaml")
	assertStoppedWithin(t, b, gone, time.Now(), 3*time.Second)
	assertStable(t, b.Node, kept, keptIDs, time.Second)
	waitPodGone(t, b.Node, gone)
}

// untouched fails unless pod, whose containers were ids, runs them still,
// with restart count 0, and berth logged no teardown of it since off.
func untouched(t *testing.T, b *Berth, off int, pod string, ids map[string]string, what string) {
	t.Helper()
	keepsRunning(t, b, off, pod, ids, 2*time.Second, what)
	assertRestartCount(t, b, pod, "0")
	if l := teardownLines(logFrom(b, off), pod); len(l) > 0 {
		t.Errorf("%s: pod %s was taken down:\n%s", what, pod, strings.Join(l, "\n"))
	}
}

func assertRestartCount(t *testing.T, b *Berth, pod, want string) {
	t.Helper()
	for _, c := range podContainers(t, b.Node, pod) {
		if got := c.Labels[runtime.LabelRestartCount]; c.Labels[runtime.LabelContainerName] != "POD" && got != want {
			t.Errorf("pod %s: container %s has %s=%q, want %q", pod, c.Labels[runtime.LabelContainerName], runtime.LabelRestartCount, got, want)
		}
	}
}

// noise rewrites file (a running pod's, same content) atomically as fast as
// the loop goes until stop is closed: every rename into the directory makes
// berth scan it at once, so scans run while the test changes other files.
// wait stops nothing: it returns, once the writer has seen stop, how many
// writes it made, failing the test if one failed.
func noise(t *testing.T, dir, file, content string, stop <-chan struct{}) (wait func() int) {
	var wg sync.WaitGroup
	n := 0
	var werr error // read after wg.Wait
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			tmp := filepath.Join(dir, "."+file+"."+randHex(3)+".tmp")
			err := os.WriteFile(tmp, []byte(content), 0o644)
			if err == nil {
				err = os.Rename(tmp, filepath.Join(dir, file))
			}
			if err != nil {
				werr = err
				return
			}
			n++
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return func() int {
		wg.Wait()
		if werr != nil {
			t.Fatalf("noise writer: %v", werr)
		}
		return n
	}
}

// TestChurn runs one berth over one pods directory; each subtest has pods
// of its own.
func TestChurn(t *testing.T) {
	b := startBerth(t, Options{})
	noiseIDs := churnPodRunning(t, b, "churn-noise.yaml", "churn-noise", "n")

	// A rename of a pod's file inside the directory, same spec, is never a
	// deletion, even while berth scans the directory for other changes
	// (a scan that listed the old name and then finds it gone).
	t.Run("rename never restarts", func(t *testing.T) {
		const pod = "churn-rename"
		off := len(b.LogText())
		ids := churnPodRunning(t, b, "churn-rename-0.yaml", pod, "r")
		stop := make(chan struct{})
		wait := noise(t, b.Pods, "churn-noise.yaml", churnPod("churn-noise", "n"), stop)
		const renames = 200
		for i := 0; i < renames; i++ {
			from := filepath.Join(b.Pods, fmt.Sprintf("churn-rename-%d.yaml", i))
			to := filepath.Join(b.Pods, fmt.Sprintf("churn-rename-%d.yaml", i+1))
			if err := os.Rename(from, to); err != nil {
				close(stop)
				wait()
				t.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond)
		}
		close(stop)
		writes := wait()
		t.Logf("%d renames beside %d atomic writes of another file", renames, writes)
		// Whatever berth did with the renames is done within a few rescans.
		untouched(t, b, off, pod, ids, fmt.Sprintf("after %d renames of its file", renames))
		assertStable(t, b.Node, "churn-noise", noiseIDs, 0)
	})

	// Truncate, write, close: the file is empty for a moment, and a scan
	// (another file renamed into the directory) reads it empty. The pod
	// runs on untouched.
	t.Run("in-place rewrite never tears down", func(t *testing.T) {
		const pod = "churn-rewrite"
		off := len(b.LogText())
		content := churnPod(pod, "w")
		ids := churnPodRunning(t, b, "churn-rewrite.yaml", pod, "w")
		path := filepath.Join(b.Pods, "churn-rewrite.yaml")
		// The longest time the file stayed empty: well under berth's
		// 100 ms debounce, unless the machine stalled the test.
		var longest time.Duration
		const rewrites = 25
		for i := 0; i < rewrites; i++ {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				t.Fatal(err)
			}
			emptied := time.Now()
			writeFile(t, b.Pods, "churn-noise.yaml", churnPod("churn-noise", "n")) // berth scans now
			time.Sleep(30 * time.Millisecond)
			if _, err := f.WriteString(content); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			longest = max(longest, time.Since(emptied))
		}
		untouched(t, b, off, pod, ids, fmt.Sprintf("after %d rewrites in place (truncate, scan, write, close; empty for %s at most)", rewrites, longest.Round(time.Millisecond)))
	})

	// The file emptied and closed (a complete event: berth reads it at
	// once), then rewritten within 50 ms.
	t.Run("emptied then rewritten never tears down", func(t *testing.T) {
		const pod = "churn-empty"
		off := len(b.LogText())
		content := churnPod(pod, "e")
		ids := churnPodRunning(t, b, "churn-empty.yaml", pod, "e")
		path := filepath.Join(b.Pods, "churn-empty.yaml")
		var longest time.Duration
		const rewrites = 10
		for i := 0; i < rewrites; i++ {
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			emptied := time.Now()
			time.Sleep(30 * time.Millisecond)
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			longest = max(longest, time.Since(emptied))
			time.Sleep(30 * time.Millisecond)
		}
		untouched(t, b, off, pod, ids, fmt.Sprintf("after %d rewrites (emptied and closed, then written within %s)", rewrites, longest.Round(time.Millisecond)))
	})

	// A duplicate sorting after the original is refused, naming the
	// original (the guard of the sort-order case in TestChurnRestart).
	t.Run("duplicate sorting after refused", func(t *testing.T) {
		const pod = "churn-dup"
		off := len(b.LogText())
		ids := churnPodRunning(t, b, "churn-dup.yaml", pod, "orig")
		writeFile(t, b.Pods, "zz-dup-churn-dup.yaml", churnPod(pod, "intruder"))
		assertRefused(t, b, off, "zz-dup-churn-dup.yaml", "churn-dup.yaml")
		keepsRunning(t, b, off, pod, ids, 2*time.Second, "beside a duplicate sorting after its file")
	})

	// Files that declare nothing, and a symlink to itself, are each named
	// in berth's log, once.
	t.Run("files declaring nothing are named once", func(t *testing.T) {
		off := len(b.LogText())
		loop := filepath.Join(b.Pods, "selfloop")
		if err := os.Symlink("selfloop", loop); err != nil {
			t.Fatal(err)
		}
		empty := filepath.Join(b.Pods, "nothing-empty.yaml")
		if err := os.WriteFile(empty, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		comment := filepath.Join(b.Pods, "nothing-comment.yaml")
		if err := os.WriteFile(comment, []byte(bigComment()), 0o644); err != nil {
			t.Fatal(err)
		}
		paths := []string{loop, empty, comment}
		named := func() (bool, string) {
			text := logFrom(b, off)
			for _, p := range paths {
				if len(linesWith(text, p)) == 0 {
					return false, p + ": no log line names it"
				}
			}
			return true, ""
		}
		deadline := time.Now().Add(10 * time.Second)
		for ok, _ := named(); !ok && time.Now().Before(deadline); ok, _ = named() {
			time.Sleep(pollEvery)
		}
		// Two more rescans (1 s apart): none names them again.
		time.Sleep(2500 * time.Millisecond)
		text := logFrom(b, off)
		for _, p := range paths {
			switch l := linesWith(text, p); len(l) {
			case 1:
			case 0:
				t.Errorf("%s: no log line names it", p)
			default:
				t.Errorf("%s: named by %d log lines, want 1:\n%s", p, len(l), strings.Join(l, "\n"))
			}
		}
	})
}

// bigComment is a 10,000,000-byte manifest file holding one YAML comment.
func bigComment() string { return "# " + strings.Repeat("x", 10_000_000-3) + "\n" }

// assertRefused waits for the error on intruder (a file in b.Pods) that its
// pod is already declared in original, logged from offset off on.
func assertRefused(t *testing.T, b *Berth, off int, intruder, original string) {
	t.Helper()
	in, orig := filepath.Join(b.Pods, intruder), filepath.Join(b.Pods, original)
	waitFor(t, 10*time.Second, fmt.Sprintf("a log line refusing %s as already declared in %s", in, orig), func() (bool, string) {
		for _, line := range linesWith(logFrom(b, off), in, "already declared in "+orig) {
			// The intruder's own error (its path first), naming the
			// original whole, not a longer name starting with it.
			if strings.Index(line, in) > strings.Index(line, "already declared in ") {
				continue
			}
			rest := line[strings.Index(line, "already declared in "+orig)+len("already declared in "+orig):]
			if rest == "" || strings.ContainsRune(" \"',;)", rune(rest[0])) {
				return true, ""
			}
		}
		return false, "not logged yet"
	})
}

// TestChurnRestart restarts berth: the controller's periodic resync is 10
// minutes, so what berth does right after a restart is what its sources
// and its first sync say, not a resync's.
func TestChurnRestart(t *testing.T) {
	pods := t.TempDir()
	// A file of one 10,000,000-byte YAML comment, as the soak's hostile
	// files had: berth's first scan after a start takes a while, so the
	// controller works the adopted containers' keys before the source's
	// first sync, as it did with the soak's 60 pods.
	if err := os.WriteFile(filepath.Join(pods, "00-big-comment.yaml"), []byte(bigComment()), 0o644); err != nil {
		t.Fatal(err)
	}
	b := startBerth(t, Options{Pods: pods, Env: []string{"BERTH_CONTROLLER_RESYNC=10m"}})

	// A new file declaring a running pod and sorting first does not take
	// the pod over: the file that declared it first keeps it, across
	// restarts too.
	t.Run("sort-order intruder refused", func(t *testing.T) {
		const pod = "stable-02"
		off := len(b.LogText())
		ids := churnPodRunning(t, b, "stable-02.yaml", pod, "orig")
		writeFile(t, b.Pods, "00-dup-stable-02.yaml", churnPod(pod, "intruder"))
		keepsRunning(t, b, off, pod, ids, 3*time.Second, "after 00-dup-stable-02.yaml (another spec, sorting first) was added")
		assertRefused(t, b, off, "00-dup-stable-02.yaml", "stable-02.yaml")

		for _, restart := range []struct {
			name string
			stop func(testing.TB)
		}{{"SIGTERM", b.Stop}, {"kill -9", b.Kill}} {
			off := len(b.LogText())
			restart.stop(t)
			b.Start(t)
			keepsRunning(t, b, off, pod, ids, 3*time.Second, "after a restart ("+restart.name+") with the intruder present")
			assertRefused(t, b, off, "00-dup-stable-02.yaml", "stable-02.yaml")
		}
	})

	// A pod file removed while berth is down: its containers stop within
	// 2 s of berth's first sync (readiness), plus the pod's 1 s grace.
	t.Run("deleted while down", func(t *testing.T) {
		goneAcrossRestart(t, b, "churn-down", func(goneFile string) {
			removeFile(t, b.Pods, goneFile)
			b.Start(t)
		})
	})

	// A pod file removed while berth starts, before it is ready.
	t.Run("deleted while starting", func(t *testing.T) {
		goneAcrossRestart(t, b, "churn-start", func(goneFile string) {
			// Removed as berth starts its sources (the big comment file
			// makes the first scan take a while): the scan may or may not
			// have listed the file.
			off := len(b.LogText())
			removed := make(chan error, 1)
			go func() {
				deadline := time.Now().Add(30 * time.Second)
				for !strings.Contains(logFrom(b, off), "starting sources") && time.Now().Before(deadline) {
					time.Sleep(2 * time.Millisecond)
				}
				removed <- os.Remove(filepath.Join(b.Pods, goneFile))
			}()
			b.Start(t)
			if err := <-removed; err != nil {
				t.Fatal(err)
			}
		})
	})

	// A pod file removed right after berth is ready (a guard: a deletion
	// while berth runs).
	t.Run("deleted just after ready", func(t *testing.T) {
		goneAcrossRestart(t, b, "churn-ready", func(goneFile string) {
			b.Start(t)
			removeFile(t, b.Pods, goneFile)
		})
	})
}

// assertStoppedWithin fails unless no container of pod runs by d after
// from: the bound berth keeps (2 s after sync) plus the pod's grace period.
func assertStoppedWithin(t *testing.T, b *Berth, pod string, from time.Time, d time.Duration) {
	t.Helper()
	for {
		list := podContainers(t, b.Node, pod)
		if len(running(list)) == 0 {
			t.Logf("pod %s: no container running %s after readiness", pod, time.Since(from).Round(time.Millisecond))
			return
		}
		if time.Since(from) > d {
			t.Fatalf("pod %s, whose file is gone, still runs %s after berth was ready: %s", pod, d, describe(list))
		}
		time.Sleep(pollEvery)
	}
}
