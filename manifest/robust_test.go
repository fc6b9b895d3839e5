package manifest

// Hostile manifests: Decode must reject or bound every
// one of them — no panic, no stack overflow, no hang, no memory blow-up —
// and keep the good pods next to them.

import (
	"fmt"
	"math/rand"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/model"
)

// hostileCase is one hostile input; gen builds it lazily (some are large).
type hostileCase struct {
	name string
	gen  func() []byte
	// check, when set, inspects the result beyond the common invariants.
	check func(t *testing.T, pods []Desired, errs []ManifestError)
}

// wantOriginError wants no pod and at least one whole-origin error whose
// message contains sub.
func wantOriginError(sub string) func(t *testing.T, pods []Desired, errs []ManifestError) {
	return func(t *testing.T, pods []Desired, errs []ManifestError) {
		t.Helper()
		if len(pods) != 0 {
			t.Errorf("accepted %d pods, want none", len(pods))
		}
		for _, e := range errs {
			if e.PodKey == "" && strings.Contains(e.Err, sub) {
				return
			}
		}
		t.Errorf("no whole-origin error containing %q in %d errors: %.300v", sub, len(errs), errs)
	}
}

// rejected wants no pod and at least one error.
// declaresNothing wants no pod and no error: separators with no line
// between them are no documents.
func declaresNothing(t *testing.T, pods []Desired, errs []ManifestError) {
	t.Helper()
	if len(pods) != 0 || len(errs) != 0 {
		t.Errorf("%d pods, errors %v; want none", len(pods), errs)
	}
}

func rejected(t *testing.T, pods []Desired, errs []ManifestError) {
	t.Helper()
	if len(pods) != 0 || len(errs) == 0 {
		t.Errorf("%d pods, %d errors; want no pod and an error", len(pods), len(errs))
	}
}

func robustPod(name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  containers:\n  - name: c\n    image: busybox\n", name)
}

func repeatJoin(s, sep string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(s)
	}
	return b.String()
}

func hostileCases() []hostileCase {
	const deep = 100000
	rnd := rand.New(rand.NewSource(1))
	random := func(n int) []byte {
		b := make([]byte, n)
		rnd.Read(b)
		return b
	}
	return []hostileCase{
		// Binary garbage.
		{name: "random bytes 64KiB", gen: func() []byte { return random(64 << 10) }, check: rejected},
		{name: "random bytes 1MiB", gen: func() []byte { return random(1 << 20) }, check: rejected},
		{name: "NULs", gen: func() []byte { return make([]byte, 1<<20) }, check: rejected},
		{name: "NUL inside a pod", gen: func() []byte { return []byte(strings.Replace(robustPod("nul"), "busybox", "busy\x00box", 1)) }, check: rejected},
		{name: "invalid UTF-8 YAML", gen: func() []byte { return []byte(strings.Replace(robustPod("utf"), "busybox", "busy\xff\xfe\xc3box", 1)) }, check: rejected},
		{name: "invalid UTF-8 JSON name", gen: func() []byte {
			return []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a` + "\xff\xc0\x80" + `"},"spec":{"containers":[{"name":"c","image":"i"}]}}`)
		}, check: rejected},
		{name: "lone surrogates and overlong", gen: func() []byte { return []byte("a: \"\\ud800\\udfff\xed\xa0\x80\xf8\x88\x80\x80\x80\"\n") }},
		{name: "pod then garbage", gen: func() []byte { return append([]byte(robustPod("head")+"---\n"), random(4096)...) }},
		{name: "UTF-16 BOM", gen: func() []byte { return append([]byte{0xff, 0xfe}, []byte(robustPod("bom16"))...) }},

		// Deep nesting: rejected by depth limits, without a stack overflow.
		{name: "100k [", gen: func() []byte { return []byte(strings.Repeat("[", deep)) }, check: rejected},
		{name: "100k [ ]", gen: func() []byte { return []byte(strings.Repeat("[", deep) + strings.Repeat("]", deep)) }, check: rejected},
		{name: "100k {", gen: func() []byte { return []byte(strings.Repeat("{", deep)) }, check: rejected},
		{name: "100k flow mappings", gen: func() []byte { return []byte(strings.Repeat("{a: ", deep) + "1" + strings.Repeat("}", deep)) }, check: rejected},
		{name: "100k JSON objects", gen: func() []byte { return []byte(strings.Repeat(`{"a":`, deep) + "1" + strings.Repeat("}", deep)) }, check: rejected},
		{name: "100k block sequences", gen: func() []byte { return []byte(strings.Repeat("- ", deep) + "1\n") }, check: rejected},
		{name: "4k block mappings", gen: func() []byte {
			var b strings.Builder
			for i := 0; i < 4000; i++ {
				b.WriteString(strings.Repeat(" ", i) + "a:\n")
			}
			return []byte(b.String())
		}, check: rejected},
		{name: "100k nesting inside a pod", gen: func() []byte {
			return []byte(robustPod("deep") + "    args: " + strings.Repeat("[", deep) + strings.Repeat("]", deep) + "\n")
		}, check: rejected},
		{name: "9k JSON nesting inside a pod", gen: func() []byte {
			return []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"d","annotations":` + strings.Repeat(`{"a":`, 9000) + `"x"` + strings.Repeat("}", 9000) + `},"spec":{"containers":[{"name":"c","image":"i"}]}}`)
		}, check: rejected},

		// Alias bombs.
		{name: "billion laughs", gen: func() []byte { return []byte(testutil.BillionLaughs) }, check: wantOriginError("")},
		{name: "billion laughs in a pod", gen: func() []byte {
			return []byte(strings.ReplaceAll("x: &x\n"+testutil.BillionLaughs, "\n", "\n  ") + "\n" + robustPod("laughs"))
		}, check: rejected},
		{name: "quadratic aliases", gen: func() []byte {
			return []byte("a: &a [" + repeatJoin(`"lol"`, ",", 2000) + "]\nb: [" + repeatJoin("*a", ",", 2000) + "]\n")
		}, check: rejected},
		{name: "self-referencing alias", gen: func() []byte { return []byte("a: &a [*a, *a]\n") }, check: rejected},
		{name: "merge-key bomb", gen: func() []byte {
			s := "a0: &a0 {k: v}\n"
			for i := 1; i < 30; i++ {
				s += fmt.Sprintf("a%d: &a%d {<<: [*a%d, *a%d], k%d: v}\n", i, i, i-1, i-1, i)
			}
			return []byte(s)
		}},

		// Sizes and counts.
		{name: "11MiB scalar", gen: func() []byte { return []byte("a: \"" + strings.Repeat("x", 11<<20) + "\"\n") }, check: rejected},
		{name: "11MiB comment after a pod", gen: func() []byte { return []byte(robustPod("big") + "# " + strings.Repeat("x", 11<<20) + "\n") }},
		{name: "3M empty documents", gen: func() []byte { return []byte(strings.Repeat("---\n", 3<<20)) }, check: declaresNothing},
		{name: "3M blank documents", gen: func() []byte { return []byte(strings.Repeat("---\n\n", 3<<20)) }, check: wantOriginError("too many documents")},
		{name: "1M small documents", gen: func() []byte { return []byte(strings.Repeat("---\na: 1\n", 1<<20)) }, check: wantOriginError("too many")},
		{name: "20k pod documents", gen: func() []byte {
			var b strings.Builder
			for i := 0; i < 20000; i++ {
				b.WriteString("---\n" + robustPod("p"+strconv.Itoa(i)))
			}
			return []byte(b.String())
		}, check: func(t *testing.T, pods []Desired, errs []ManifestError) {
			if len(pods) == 0 || len(pods) > MaxManifestObjects {
				t.Errorf("%d pods, want 1..%d", len(pods), MaxManifestObjects)
			}
			wantOriginErrorAnyPods(t, errs, "too many documents")
		}},
		{name: "1M list items", gen: func() []byte {
			return []byte(`{"apiVersion":"v1","kind":"List","items":[` + repeatJoin("1", ",", 1<<20) + "]}")
		}, check: func(t *testing.T, pods []Desired, errs []ManifestError) {
			rejected(t, pods, errs)
			if len(errs) > MaxManifestErrors {
				t.Errorf("%d errors, want at most %d", len(errs), MaxManifestErrors)
			}
		}},
		{name: "1M legacy list items", gen: func() []byte { return []byte("[" + repeatJoin("1", ",", 1<<20) + "]") }, check: rejected},
		{name: "pod with 50k invalid containers", gen: func() []byte {
			return []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"many"},"spec":{"containers":[` + repeatJoin(`{"name":"c"}`, ",", 50000) + "]}}")
		}, check: func(t *testing.T, pods []Desired, errs []ManifestError) {
			rejected(t, pods, errs)
			if len(errs) > MaxManifestErrors {
				t.Errorf("%d errors, want at most %d", len(errs), MaxManifestErrors)
			}
		}},
		// A large YAML document costs linear time in the YAML library (about
		// 1 s per MiB of tiny nodes); 200k keys keep this test quick.
		{name: "200k-key mapping", gen: func() []byte {
			var b strings.Builder
			for i := 0; i < 200000; i++ {
				b.WriteString("k" + strconv.Itoa(i) + ": 1\n")
			}
			return []byte(b.String())
		}, check: rejected},
	}
}

func wantOriginErrorAnyPods(t *testing.T, errs []ManifestError, sub string) {
	t.Helper()
	for _, e := range errs {
		if e.PodKey == "" && strings.Contains(e.Err, sub) {
			return
		}
	}
	t.Errorf("no whole-origin error containing %q in %d errors", sub, len(errs))
}

// checkDecoded asserts the invariants every Decode result must hold.
func checkDecoded(t *testing.T, origin string, opts Options, pods []Desired, errs []ManifestError) {
	t.Helper()
	seen := map[string]bool{}
	for _, d := range pods {
		key := d.Pod.Namespace + "/" + d.Pod.Name
		if seen[key] {
			t.Fatalf("duplicate pod %s", key)
		}
		seen[key] = true
		if verrs := Validate(d.Pod, opts); len(verrs) > 0 {
			t.Fatalf("accepted an invalid pod %s: %v", key, verrs)
		}
		if d.Pod.UID == "" || d.Origin != origin {
			t.Fatalf("pod %s: uid %q origin %q", key, d.Pod.UID, d.Origin)
		}
	}
	if len(pods) > MaxManifestObjects {
		t.Fatalf("%d pods from one origin, more than %d", len(pods), MaxManifestObjects)
	}
	if len(errs) > MaxManifestErrors {
		t.Fatalf("%d errors from one origin, more than %d", len(errs), MaxManifestErrors)
	}
	for _, e := range errs {
		if e.Origin != origin || e.Err == "" {
			t.Fatalf("malformed error %+v", e)
		}
	}
}

// decodeBounded runs Decode in a goroutine so that a panic or a hang is a
// test failure (not a crash or a stuck run), and reports its duration and
// the bytes it allocated.
func decodeBounded(t *testing.T, data []byte, limit time.Duration) ([]Desired, []ManifestError, time.Duration, uint64) {
	t.Helper()
	type result struct {
		pods  []Desired
		errs  []ManifestError
		panic any
	}
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	start := time.Now()
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			r.panic = recover()
			done <- r
		}()
		r.pods, r.errs = Decode("robust", "hostile.yaml", data, Options{})
	}()
	select {
	case r := <-done:
		took := time.Since(start)
		goruntime.ReadMemStats(&after)
		if r.panic != nil {
			t.Fatalf("Decode panicked: %v", r.panic)
		}
		return r.pods, r.errs, took, after.TotalAlloc - before.TotalAlloc
	case <-time.After(limit):
		t.Fatalf("Decode still running after %s", limit)
	}
	return nil, nil, 0, 0
}

// TestRobustDecodeHostile feeds Decode hostile inputs: each must finish
// within a bound (generous, for slow or -race runs), allocate a bounded
// amount, and never panic; what it returns must hold Decode's invariants.
func TestRobustDecodeHostile(t *testing.T) {
	const limit = 20 * time.Second
	const maxAlloc = 4 << 30 // a real alias expansion would need far more
	for _, c := range hostileCases() {
		t.Run(c.name, func(t *testing.T) {
			data := c.gen()
			pods, errs, took, alloc := decodeBounded(t, data, limit)
			checkDecoded(t, "hostile.yaml", Options{}, pods, errs)
			if alloc > maxAlloc {
				t.Errorf("Decode of %d bytes allocated %d MiB", len(data), alloc>>20)
			}
			if c.check != nil {
				c.check(t, pods, errs)
			}
			first := ""
			if len(errs) > 0 {
				first = errs[0].Error()
				if len(first) > 120 {
					first = first[:120] + "…"
				}
			}
			t.Logf("%d bytes: %s, %d MiB allocated, %d pods, %d errors %s", len(data), took.Round(time.Millisecond), alloc>>20, len(pods), len(errs), first)
		})
	}
}

// TestRobustDecodeTruncated decodes every prefix of valid manifests of each
// format: no panic, and a prefix that is a complete document is accepted or
// rejected with well-formed errors.
func TestRobustDecodeTruncated(t *testing.T) {
	inputs := map[string]string{
		"pod":       podYAML,
		"legacy":    seedManifest,
		"multi-doc": podYAML + "---\n" + robustPod("second") + "---\n" + seedManifest,
		"list":      `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"i"}]}},{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"},"spec":{"containers":[{"name":"c","image":"i"}]}}]}`,
		"podlist":   "apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: a}\n  spec: {containers: [{name: c, image: i}]}\n",
	}
	start := time.Now()
	n := 0
	for name, in := range inputs {
		opts := Options{Level: model.LevelPrivileged} // the seed manifest has a hostDir
		full, ferrs := Decode("robust", "t.yaml", []byte(in), opts)
		if len(full) == 0 || len(ferrs) != 0 {
			t.Fatalf("%s: the untruncated input gives %d pods, errors %v", name, len(full), ferrs)
		}
		for i := 0; i < len(in); i++ {
			pods, errs := Decode("robust", "t.yaml", []byte(in[:i]), opts)
			checkDecoded(t, "t.yaml", opts, pods, errs)
			if len(pods) > len(full) {
				t.Fatalf("%s[:%d]: %d pods, more than the whole input's %d", name, i, len(pods), len(full))
			}
			n++
		}
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("%d truncated inputs took %s", n, time.Since(start))
	}
	t.Logf("%d truncated inputs in %s", n, time.Since(start).Round(time.Millisecond))
}

// TestRobustDecodeRandomMutations flips, drops and duplicates bytes of valid
// manifests (a cheap, deterministic complement to FuzzDecode).
func TestRobustDecodeRandomMutations(t *testing.T) {
	rnd := rand.New(rand.NewSource(42))
	const special = "&a *a [{\x00\"'|>-:\xff"
	seeds := []string{podYAML, seedManifest, podYAML + "---\n" + seedManifest, "- " + strings.ReplaceAll(strings.TrimSpace(seedManifest), "\n", "\n  ") + "\n"}
	for i := 0; i < 3000; i++ {
		b := []byte(seeds[rnd.Intn(len(seeds))])
		for m := rnd.Intn(8) + 1; m > 0 && len(b) > 0; m-- {
			p := rnd.Intn(len(b))
			switch rnd.Intn(5) {
			case 0:
				b[p] = byte(rnd.Intn(256))
			case 1:
				b = append(b[:p], b[p+1:]...)
			case 2:
				q := p + rnd.Intn(len(b)-p)
				b = append(b[:q], append(append([]byte{}, b[p:q]...), b[q:]...)...)
			case 3:
				b = append(b[:p], append([]byte{special[rnd.Intn(len(special))]}, b[p:]...)...)
			case 4:
				b = append(b[:p], append([]byte("\n---\n"), b[p:]...)...)
			}
		}
		pods, errs := Decode("robust", "m.yaml", b, Options{})
		checkDecoded(t, "m.yaml", Options{}, pods, errs)
	}
}

// TestRobustDecodeLongLastLine: a last line without its newline whose length
// is a multiple of 4096 (the line reader's buffer) was silently dropped, so
// a one-line flow-style manifest of 4096 bytes declared no pod at all (and
// its running pod was deleted), and a multi-line one lost its last field.
func TestRobustDecodeLongLastLine(t *testing.T) {
	for _, size := range []int{4096, 8192, 4095, 4097} {
		head := "{apiVersion: v1, kind: Pod, metadata: {name: flow, annotations: {pad: '"
		tail := "'}}, spec: {containers: [{name: c, image: busybox}]}}"
		flow := head + strings.Repeat("x", size-len(head)-len(tail)) + tail
		pods, errs := Decode("robust", "f.yaml", []byte(flow), Options{})
		if len(pods) != 1 || len(errs) != 0 {
			t.Errorf("one-line flow manifest of %d bytes: %d pods, errors %v", size, len(pods), errs)
		}

		block := robustPod("block") + "    args: ['"
		block += strings.Repeat("y", size-2-len("    args: ['")) + "']"
		pods, errs = Decode("robust", "b.yaml", []byte(block), Options{})
		if len(pods) != 1 || len(errs) != 0 || len(pods[0].Pod.Spec.Containers[0].Args) != 1 {
			t.Errorf("manifest with a last line of %d bytes: %d pods, errors %v", size, len(pods), errs)
		}
	}
	// 4096 NULs are an error, not an empty
	if pods, errs := Decode("robust", "n.yaml", make([]byte, 4096), Options{}); len(pods) != 0 || len(errs) == 0 {
		t.Errorf("4096 NULs: %d pods, errors %v", len(pods), errs)
	}
}
