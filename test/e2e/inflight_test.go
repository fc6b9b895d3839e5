package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// heavyPatch is a valid JSON patch of a ConfigMap holding a 900 KiB value
// at /data/a, as costly as the patch limits let it be: 10 000 operations,
// copying that value (then removing the copy) as often as the copy limit
// allows, and leaving the object as it was.
func heavyPatch() string {
	ops := make([]string, 0, 10000)
	for len(ops) < 10000 {
		if len(ops)%64 < 4 {
			ops = append(ops, `{"op":"copy","from":"/data/a","path":"/data/b"}`, `{"op":"remove","path":"/data/b"}`)
			continue
		}
		ops = append(ops, `{"op":"add","path":"/data/c","value":"v"}`, `{"op":"remove","path":"/data/c"}`)
	}
	return "[" + strings.Join(ops, ",") + "]"
}

// peakRSS is berth's peak resident memory (VmHWM) in MiB, 0 if unknown.
func peakRSS(b *Berth) float64 {
	b.mu.Lock()
	pid := b.cmd.Process.Pid
	b.mu.Unlock()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb / 1024
		}
	}
	return 0
}

// concurrentPatches sends n copies of patch to url with token at once and
// counts the answers by status.
func concurrentPatches(t *testing.T, n int, url, token, patch string) (codes map[int]int, refusal string) {
	t.Helper()
	codes = map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			code, body := patchDo(t, "PATCH", url, token, "application/json-patch+json", patch)
			mu.Lock()
			defer mu.Unlock()
			codes[code]++
			if code == http.StatusTooManyRequests {
				refusal = body
			}
		})
	}
	close(start)
	wg.Wait()
	return codes, refusal
}

// TestConcurrentWritesAreCapped is the attack of a push token's holder
// sending many costly writes at once (each of these PATCHes takes its 5 s
// limit, about 20 MiB, and would be retried on conflicts): one token has
// at most server.max_mutating_requests_per_token in flight (4 here), the
// others are answered 429 TooManyRequests with Retry-After, and berth
// stays ready. (Measured: without the cap, 40 such patches took berth's
// peak RSS from 63 to 813 MiB; with 4, 10 in flight: 145, 256 MiB.)
func TestConcurrentWritesAreCapped(t *testing.T) {
	b, admin, push := startWithPush(t, "BERTH_SERVER_MAX_MUTATING_REQUESTS_PER_TOKEN=4")
	cms := b.URL("/api/v1/namespaces/default/configmaps")
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"a":"` + strings.Repeat("A", 900<<10) + `"}}`
	if code, body := patchDo(t, "POST", cms, push, "application/json", cm); code != http.StatusCreated {
		t.Fatalf("create big: %d %.300s", code, body)
	}
	before := peakRSS(b)
	const n = 40
	codes, refusal := concurrentPatches(t, n, cms+"/big", push, heavyPatch())
	t.Logf("%d heavy patches at once: answers %v; berth's peak RSS %.0f MiB, %.0f MiB before", n, codes, peakRSS(b), before)
	served := codes[http.StatusOK] + codes[http.StatusConflict] + codes[http.StatusRequestEntityTooLarge]
	if served == 0 || served > 4 || served+codes[http.StatusTooManyRequests] != n {
		t.Fatalf("answers %v: want at most 4 served (200, 409 after retries, or 413 at the time limit), the rest 429", codes)
	}
	var st metav1.Status
	if err := json.Unmarshal([]byte(refusal), &st); err != nil || st.Reason != metav1.StatusReasonTooManyRequests ||
		st.Details == nil || st.Details.RetryAfterSeconds != 1 || !strings.Contains(st.Message, "server.max_mutating_requests_per_token") {
		t.Fatalf("the refusal: %.400s", refusal)
	}
	if code, _ := authDo(t, "GET", b.URL("/readyz"), admin, ""); code != http.StatusOK {
		t.Fatalf("berth after the writes: /readyz %d", code)
	}
}
