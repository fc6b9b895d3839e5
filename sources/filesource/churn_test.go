package filesource

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/sources"
)

// atomicWrite writes name in dir as config tools do: a dotfile renamed in.
func atomicWrite(t *testing.T, dir, name, data string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// fakeClockSource runs a file source on a fake clock (its debounce and
// holds then pass only when the test steps the clock) with a long debounce.
func fakeClockSource(t *testing.T, dir string) (*Source, *clocktesting.FakeClock, <-chan sources.Update) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Now())
	s := New("file", dir, 0, sources.Options{Clock: clk})
	s.Debounce = time.Second
	return s, clk, startSource(t, s)
}

// webOnFakeClock runs a file source on a fake clock over a directory
// holding web.yaml (pod web, busybox:1), its first scan taken. Linux only:
// these tests need inotify's close events.
func webOnFakeClock(t *testing.T) (string, *clocktesting.FakeClock, <-chan sources.Update) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("a close after writing is known from inotify only")
	}
	dir := t.TempDir()
	write(t, dir, "web.yaml", podManifest("web", "busybox:1"))
	_, clk, updates := fakeClockSource(t, dir)
	waitFor(t, updates, "first scan", hasPods("web"))
	return dir, clk, updates
}

func podOrigin(u sources.Update, name string) string {
	for _, d := range u.Pods {
		if d.Pod.Name == name {
			return d.Origin
		}
	}
	return ""
}

// A file emptied in place (truncated and closed, as a rewrite begins) keeps
// its pods past the debounce and one more read; it loses them only when it
// stays empty after that.
func TestEmptiedFileKeepsItsPodsPastTheDebounce(t *testing.T) {
	dir, clk, updates := webOnFakeClock(t)

	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	u := waitFor(t, updates, "the scan of the emptied file", func(sources.Update) bool { return true })
	if !hasPods("web")(u) {
		t.Fatalf("an emptied file dropped its pod at once: %s", describe(u))
	}
	write(t, dir, "web.yaml", podManifest("web", "busybox:2"))
	u = waitFor(t, updates, "the rewritten file", func(u sources.Update) bool { return podImage(u, "web") == "busybox:2" })
	if !hasPods("web")(u) {
		t.Fatalf("rewrite: %s", describe(u))
	}

	// Emptied for good: the pod goes after the debounce, not before.
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, updates, "the scan of the emptied file", hasPods("web"))
	testutil.WaitFor(t, 5*time.Second, "the hold's timer", clk.HasWaiters)
	clk.Step(time.Second - time.Millisecond)
	noUpdate(t, updates, 100*time.Millisecond, "before the debounce passed")
	clk.Step(time.Millisecond)
	u = waitFor(t, updates, "the scan after the debounce", func(sources.Update) bool { return true })
	if !hasPods()(u) {
		t.Fatalf("a file empty past the debounce kept its pod: %s", describe(u))
	}
	if !strings.Contains(strings.Join(u.Warnings, "\n"), "web.yaml: declares nothing") {
		t.Errorf("warnings %q do not say the file declares nothing", u.Warnings)
	}
}

// A file being rewritten in place (truncated, half written, not yet
// closed) is not read by a scan another file's change starts: its pods keep
// their last spec until it is closed.
func TestScanKeepsTheLastDecodeOfAFileBeingWritten(t *testing.T) {
	dir, _, updates := webOnFakeClock(t)

	f, err := os.OpenFile(filepath.Join(dir, "web.yaml"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := podManifest("web", "busybox:2")
	if _, err := f.WriteString(m[:strings.Index(m, "  containers:")]); err != nil {
		t.Fatal(err)
	}
	atomicWrite(t, dir, "db.yaml", podManifest("db", "busybox:1"))
	u := waitFor(t, updates, "the scan of db.yaml", hasPods("db", "web"))
	if img := podImage(u, "web"); img != "busybox:1" || len(u.Errors) != 0 {
		t.Fatalf("a half-written web.yaml was read: image %q, errors %v", img, u.Errors)
	}
	if _, err := f.WriteString(m[strings.Index(m, "  containers:"):]); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, updates, "the closed file", func(u sources.Update) bool { return podImage(u, "web") == "busybox:2" })
}

// A rename within the directory never leaves a pod out of an update, even
// when scans run all the while (other files changing): a scan that listed
// the old name and found it gone holds the pod until the new name is read.
func TestRenamesNeverDropThePod(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "web-0.yaml", podManifest("web", "busybox:1"))
	s := New("file", dir, 0, sources.Options{})
	s.Debounce = 50 * time.Millisecond
	updates := startSource(t, s)
	waitFor(t, updates, "first scan", hasPods("web"))

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // other files changing, each a scan at once
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			atomicWrite(t, dir, "other.yaml", podManifest("other", "busybox:"+string(rune('a'+i%2))))
		}
	}()
	dropped := make(chan string, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case u := <-updates:
				if podOrigin(u, "web") == "" {
					select {
					case dropped <- describe(u):
					default:
					}
				}
			}
		}
	}()
	const renames = 300
	for i := 1; i <= renames; i++ {
		from := filepath.Join(dir, "web-"+strconv.Itoa(i-1)+".yaml")
		if err := os.Rename(from, filepath.Join(dir, "web-"+strconv.Itoa(i)+".yaml")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	select {
	case d := <-dropped:
		t.Fatalf("an update during the renames left the pod out: %s", d)
	default:
	}
}

// A file added later that declares a running pod is refused, whatever its
// name sorts to; the file that declared the pod first keeps it, across a
// restart of the source too (the owners file).
func TestFirstDeclarerKeepsThePodWhateverTheNamesSortTo(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	owners := filepath.Join(state, "owners.json")
	write(t, dir, "stable-02.yaml", podManifest("stable-02", "busybox:1"))
	start := func() (<-chan sources.Update, func()) {
		s := New("file", dir, 0, sources.Options{})
		s.Debounce = 10 * time.Millisecond
		s.OwnersFile = owners
		out, stop := runStoppable(t, s)
		t.Cleanup(stop)
		return out, stop
	}
	updates, stop := start()
	waitFor(t, updates, "first scan", hasPods("stable-02"))
	write(t, dir, "00-dup-stable-02.yaml", podManifest("stable-02", "busybox:intruder"))
	check := func(what string, u sources.Update) {
		t.Helper()
		if img := podImage(u, "stable-02"); img != "busybox:1" {
			t.Fatalf("%s: the intruder took the pod (image %q): %s", what, img, describe(u))
		}
		if len(u.Errors) != 1 || u.Errors[0].Origin != filepath.Join(dir, "00-dup-stable-02.yaml") ||
			!strings.Contains(u.Errors[0].Err, "already declared in "+filepath.Join(dir, "stable-02.yaml")) {
			t.Fatalf("%s: errors %v, want the intruder refused naming stable-02.yaml", what, u.Errors)
		}
	}
	check("while running", waitFor(t, updates, "the intruder's scan", func(u sources.Update) bool { return len(u.Errors) > 0 }))

	stop()
	restarted, _ := start()
	check("after a restart", waitFor(t, restarted, "first scan after the restart", func(sources.Update) bool { return true }))

	// The owner gone, the key is the next file's.
	if err := os.Remove(filepath.Join(dir, "stable-02.yaml")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, restarted, "the owner's removal", func(u sources.Update) bool {
		return podImage(u, "stable-02") == "busybox:intruder" && len(u.Errors) == 0
	})
}

// A renamed file keeps its keys under its new name even when another file
// declaring them sorts first.
func TestRenamedOwnerKeepsItsKeys(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "m-web.yaml", podManifest("web", "busybox:1"))
	updates := runSource(t, New("file", dir, 0, sources.Options{}))
	waitFor(t, updates, "first scan", hasPods("web"))
	write(t, dir, "a-intruder.yaml", podManifest("web", "busybox:intruder"))
	waitFor(t, updates, "the intruder refused", func(u sources.Update) bool { return len(u.Errors) == 1 })
	if err := os.Rename(filepath.Join(dir, "m-web.yaml"), filepath.Join(dir, "z-web.yaml")); err != nil {
		t.Fatal(err)
	}
	u := waitFor(t, updates, "the renamed owner", func(u sources.Update) bool { return podOrigin(u, "web") == filepath.Join(dir, "z-web.yaml") })
	if img := podImage(u, "web"); img != "busybox:1" || len(u.Errors) != 1 {
		t.Fatalf("after the rename: image %q, errors %v", img, u.Errors)
	}
}

// A symlink that cannot be followed (here a loop) is named once, with the
// reason, as other skipped entries are.
func TestSymlinkLoopIsNamed(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("loop.yaml", filepath.Join(dir, "loop.yaml")); err != nil {
		t.Fatal(err)
	}
	files, skipped, err := sources.ListDir(dir)
	if err != nil || len(files) != 0 {
		t.Fatalf("files %v, err %v", files, err)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0].String(), "loop.yaml: skipped: a symlink that cannot be followed") ||
		!strings.Contains(skipped[0].String(), "too many levels of symbolic links") {
		t.Fatalf("skipped %v", skipped)
	}
}

// An owner whose file breaks keeps its keys: a file declaring one of them
// meanwhile is refused, not run in its place.
func TestBrokenOwnerKeepsItsKeys(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "web.yaml", podManifest("web", "busybox:1"))
	updates := runSource(t, New("file", dir, 0, sources.Options{}))
	waitFor(t, updates, "first scan", hasPods("web"))
	atomicWrite(t, dir, "web.yaml", "kind: Pod\nmetadata: [\n")
	atomicWrite(t, dir, "a-intruder.yaml", podManifest("web", "busybox:intruder"))
	u := waitFor(t, updates, "both files read", func(u sources.Update) bool { return len(u.Errors) == 2 })
	if len(u.Pods) != 0 {
		t.Fatalf("the intruder runs while the owner's file is broken: %s", describe(u))
	}
	if !strings.Contains(describe(u), "already declared in "+filepath.Join(dir, "web.yaml")) {
		t.Fatalf("the intruder is not refused naming the owner: %s", describe(u))
	}
}

// A directory swapped by two renames (mv pods pods.old; mv pods.new pods)
// holds its pods in between, when a scan finds no directory at all; a
// directory that stays gone loses them after the debounce.
func TestSwappedDirectoryHoldsItsPods(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "pods")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.yaml", podManifest("a", "busybox"))
	clk := clocktesting.NewFakeClock(time.Now())
	s := New("file", dir, 0, sources.Options{Clock: clk})
	log := s.opts.Logger()
	scan := func(what string, want ...string) {
		t.Helper()
		u, _, ok := s.scan(log)
		if !ok || !hasPods(want...)(u) {
			t.Fatalf("%s: %s, want pods %v", what, describe(u), want)
		}
	}
	scan("first scan", "a")
	if err := os.Rename(dir, filepath.Join(parent, "pods.old")); err != nil {
		t.Fatal(err)
	}
	scan("between the renames", "a")
	next := filepath.Join(parent, "pods.new")
	if err := os.Mkdir(next, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, next, "a.yaml", podManifest("a", "busybox"))
	if err := os.Rename(next, dir); err != nil {
		t.Fatal(err)
	}
	scan("after the swap", "a")
	if err := os.Rename(dir, filepath.Join(parent, "pods.gone")); err != nil {
		t.Fatal(err)
	}
	scan("the directory just gone", "a")
	clk.Step(DefaultDebounce)
	scan("the directory gone past the debounce")
}

// A hold lasts until the file has stayed unchanged past the debounce: a
// file rewritten again and again (each time empty for a moment) keeps its
// pods however long the rewrites go on.
func TestHoldLastsWhileTheFileKeepsChanging(t *testing.T) {
	dir, clk, updates := webOnFakeClock(t)
	empty := func() {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "web.yaml"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	empty()
	waitFor(t, updates, "the scan of the emptied file", hasPods("web"))
	for range 3 {
		testutil.WaitFor(t, 5*time.Second, "the hold's timer", clk.HasWaiters)
		clk.Step(900 * time.Millisecond)
		empty() // changed again, still empty: seen at the clock's time
		waitFor(t, updates, "the scan of the file emptied again", hasPods("web"))
		clk.Step(100 * time.Millisecond) // the first timer: 1 s since it was armed
		u := waitFor(t, updates, "the debounced scan", func(sources.Update) bool { return true })
		if !hasPods("web")(u) {
			t.Fatalf("a file changed within the debounce lost its pod: %s", describe(u))
		}
	}
	// The hold's timer is armed after the scan that sent the last update:
	// a step before it is armed passes it by.
	testutil.WaitFor(t, 5*time.Second, "the hold's timer", clk.HasWaiters)
	clk.Step(time.Second)
	waitFor(t, updates, "the scan after the file stayed empty", hasPods())
}

// A rename the watch paired by its cookie carries the key to the new name
// even when the file changed too and another declaration sorts first; an
// unpaired one is held meanwhile instead of going to that other file.
func TestPairedRenameCarriesTheKey(t *testing.T) {
	desired := func(origin, image string) manifest.Desired {
		return manifest.Desired{Origin: origin, Pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: image}}}}}
	}
	now := time.Now()
	for _, paired := range []bool{true, false} {
		o := newDeclOwners("", time.Second)
		churn := newFileChurn(time.Second)
		present := map[string]bool{"/d/m-web.yaml": true}
		r := decoding{Update: sources.Update{Pods: []manifest.Desired{desired("/d/m-web.yaml", "busybox:1")}}, present: present}
		o.settle(&r.Update, r.facts(churn), now)

		cookie := uint32(0)
		if paired {
			cookie = 7
		}
		churn.see(fileEvent{name: "/d/m-web.yaml", op: opMovedOut, cookie: cookie}, now)
		churn.see(fileEvent{name: "/d/z-web.yaml", op: opMovedIn, cookie: cookie}, now)
		r = decoding{Update: sources.Update{Pods: []manifest.Desired{desired("/d/a-intruder.yaml", "busybox:x"), desired("/d/z-web.yaml", "busybox:2")}},
			present: map[string]bool{"/d/a-intruder.yaml": true, "/d/z-web.yaml": true}}
		held := o.settle(&r.Update, r.facts(churn), now).held
		switch {
		case len(r.Pods) != 1:
			t.Fatalf("paired %v: pods %v", paired, r.Pods)
		case paired && (r.Pods[0].Origin != "/d/z-web.yaml" || len(held) != 0):
			t.Errorf("a paired rename: the key went to %s (held %v), want the renamed file", r.Pods[0].Origin, held)
		case !paired && (r.Pods[0].Origin != "/d/m-web.yaml" || !held["/d/m-web.yaml"]):
			t.Errorf("an unpaired rename: the key went to %s (held %v), want it held on the old name", r.Pods[0].Origin, held)
		}
		// Held, the key refuses both files until the hold is over.
		if want := map[bool]int{true: 1, false: 2}[paired]; len(r.Errors) != want || r.Errors[0].Origin != "/d/a-intruder.yaml" {
			t.Errorf("paired %v: errors %v, want %d, the intruder's first", paired, r.Errors, want)
		}
	}
}

// An identical copy of a pod's file, refused, never takes the pod when the
// original is renamed, or moved aside by an editor's save.
func TestCopyNeverTakesARenamedPod(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("renames are paired by inotify only")
	}
	dir := t.TempDir()
	write(t, dir, "web.yaml", podManifest("web", "busybox:1"))
	s := New("file", dir, 0, sources.Options{})
	s.Debounce = time.Second // the save's write comes well within it
	updates := startSource(t, s)
	waitFor(t, updates, "first scan", hasPods("web"))
	write(t, dir, "00-copy.yaml", podManifest("web", "busybox:1"))
	waitFor(t, updates, "the copy refused", func(u sources.Update) bool { return len(u.Errors) == 1 })
	owns := func(what, file string) func(sources.Update) bool {
		return func(u sources.Update) bool {
			if o := podOrigin(u, "web"); o != filepath.Join(dir, file) {
				t.Fatalf("%s: the pod went to %s: %s", what, o, describe(u))
			}
			return len(u.Errors) == 1 && u.Errors[0].Origin == filepath.Join(dir, "00-copy.yaml")
		}
	}
	if err := os.Rename(filepath.Join(dir, "web.yaml"), filepath.Join(dir, "web-r1.yaml")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, updates, "the renamed file", owns("a rename", "web-r1.yaml"))

	// vim's save: the file moved aside, a scan (another file), the new file.
	if err := os.Rename(filepath.Join(dir, "web-r1.yaml"), filepath.Join(dir, "web-r1.yaml~")); err != nil {
		t.Fatal(err)
	}
	atomicWrite(t, dir, "other.yaml", podManifest("other", "busybox:1"))
	u := waitFor(t, updates, "the scan between", hasPods("other", "web"))
	if o := podOrigin(u, "web"); o != filepath.Join(dir, "web-r1.yaml") {
		t.Fatalf("between the save's rename and its write: the pod went to %s, want it held", o)
	}
	write(t, dir, "web-r1.yaml", podManifest("web", "busybox:1"))
	waitFor(t, updates, "the saved file", owns("a save", "web-r1.yaml"))
}

// An owner of the last run that does not declare its key when berth starts
// (its file empty, invalid or cut short by a rewrite under way, or its
// directory being swapped) is waited for past the debounce before the first
// update: no update without the pod is sent, and a refused copy does not
// take it meanwhile.
func TestRestartWaitsForAnOwnerBeingRewritten(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, dir string) // before the restart
		mend  func(t *testing.T, dir string) // after it
	}{
		{"empty", func(t *testing.T, dir string) { write(t, dir, "web.yaml", "") }, nil},
		{"invalid", func(t *testing.T, dir string) { write(t, dir, "web.yaml", "kind: Pod\nmetadata:\n  name: web\n") }, nil},
		{"cut short", func(t *testing.T, dir string) {
			write(t, dir, "web.yaml", "kind: Pod\nmetadata:\n  name: web\nspec:\n  conta")
		}, nil},
		{"directory swapped", func(t *testing.T, dir string) {
			if err := os.Rename(dir, dir+".old"); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, dir string) {
			if err := os.Rename(dir+".old", dir); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent, state := t.TempDir(), t.TempDir()
			dir := filepath.Join(parent, "pods")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			owners := filepath.Join(state, "owners.json")
			write(t, dir, "web.yaml", podManifest("web", "busybox:1"))
			s := New("file", dir, 0, sources.Options{})
			s.Debounce, s.OwnersFile = 10*time.Millisecond, owners
			updates, stop := runStoppable(t, s)
			waitFor(t, updates, "first run", hasPods("web"))
			write(t, dir, "a-copy.yaml", podManifest("web", "busybox:copy"))
			waitFor(t, updates, "the copy refused", func(u sources.Update) bool { return len(u.Errors) == 1 })
			stop()

			tc.spoil(t, dir)
			clk := clocktesting.NewFakeClock(time.Now())
			s = New("file", dir, 0, sources.Options{Clock: clk})
			s.Debounce, s.OwnersFile = time.Second, owners
			updates = startSource(t, s)
			testutil.WaitFor(t, 5*time.Second, "the first scan's retry timer", clk.HasWaiters)
			noUpdate(t, updates, 100*time.Millisecond, "while the owner is waited for")
			if tc.mend != nil {
				tc.mend(t, dir)
			} else {
				write(t, dir, "web.yaml", podManifest("web", "busybox:1"))
			}
			u := waitFor(t, updates, "the owner back", func(sources.Update) bool { return true })
			if img := podImage(u, "web"); img != "busybox:1" || len(u.Errors) != 1 {
				t.Fatalf("after the restart: image %q, errors %v", img, u.Errors)
			}
		})
	}
}

// Owners of keys that no file declares any more, whether they went while
// berth ran or while it was down, are not kept in the owners file.
func TestOwnersFileForgetsKeysNobodyDeclares(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	owners := filepath.Join(state, "owners.json")
	for _, name := range []string{"pa", "pb", "pc"} {
		write(t, dir, "p.yaml", podManifest(name, "busybox:1"))
		s := New("file", dir, 0, sources.Options{})
		s.Debounce, s.OwnersFile = 10*time.Millisecond, owners
		updates, stop := runStoppable(t, s)
		waitFor(t, updates, "pod "+name, hasPods(name))
		stop()
	}
	ownersAre := func(want string) {
		t.Helper()
		data, err := os.ReadFile(owners)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != want {
			t.Fatalf("owners file %s, want %s", data, want)
		}
	}
	ownersAre(`{"Pod/default/pc":"` + filepath.Join(dir, "p.yaml") + `"}`)

	s := New("file", dir, 0, sources.Options{})
	s.Debounce, s.OwnersFile = 10*time.Millisecond, owners
	updates := startSource(t, s)
	waitFor(t, updates, "pod pc", hasPods("pc"))
	if err := os.Remove(filepath.Join(dir, "p.yaml")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, updates, "the removal", hasPods())
	ownersAre(`{}`)
}
