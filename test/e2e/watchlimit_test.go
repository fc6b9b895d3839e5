package e2e

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openFDs counts the descriptors process pid holds.
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestHeldWatchesLeaveTheFileSourceItsDescriptors is the attack of a push
// client on berth's descriptors: berth runs with an open-file limit of
// 512, and the push token opens 600 watches at once and holds them. Only
// server.max_watches_per_token (100) are served, the others answered 429
// with Retry-After at once; the file source still starts a new pod, berth
// never logs "too many open files", and the admin's requests are answered.
func TestHeldWatchesLeaveTheFileSourceItsDescriptors(t *testing.T) {
	b, admin, push := startWithPush(t, "BERTH_SERVER_MAX_CONNECTIONS=200")
	b.mu.Lock()
	pid := b.cmd.Process.Pid
	b.mu.Unlock()
	const limit = 512
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: limit, Max: limit}, nil); err != nil {
		t.Fatalf("prlimit berth: %v", err)
	}
	idle := openFDs(t, pid)

	const watches = 600
	ctx, cancel := context.WithCancel(context.Background())
	codes := make(chan int, watches)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for range watches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, "GET", b.URL("/api/v1/namespaces/default/pods?watch=true"), nil)
			req.Header.Set("Authorization", "Bearer "+push)
			resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
			if err != nil {
				codes <- 0
				return
			}
			code := resp.StatusCode
			if code == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
				code = -code // a 429 without Retry-After
			}
			codes <- code
			if code != http.StatusOK {
				resp.Body.Close()
				return
			}
			<-ctx.Done() // held until the test ends
			resp.Body.Close()
		}()
	}
	count := map[int]int{}
	deadline := time.After(waitLong)
collect:
	for range watches {
		select {
		case c := <-codes:
			count[c]++
		case <-deadline:
			t.Errorf("after %s only %d of %d watches were answered", waitLong, count[200]+count[429], watches)
			break collect
		}
	}
	if count[http.StatusOK] != 100 || count[http.StatusTooManyRequests] != watches-100 {
		t.Errorf("watch answers by status: %v, want 100 200s and %d 429s with Retry-After", count, watches-100)
	}
	t.Logf("berth's descriptors: %d idle, %d with the watches held (limit %d)", idle, openFDs(t, pid), limit)

	writeFile(t, b.Pods, "after.yaml", sleeper("after"))
	waitPodRunning(t, b.Node, "after", "app")
	if code, body := authDo(t, "GET", b.URL("/pods/default/after"), admin, ""); code != http.StatusOK {
		t.Errorf("admin GET beside the held watches: %d %s", code, body)
	}
	if strings.Contains(b.LogText(), "too many open files") {
		t.Errorf("berth ran out of descriptors:\n%s", b.LogText())
	}
}
