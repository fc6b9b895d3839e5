package kubeapi

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
)

// BenchmarkWatchOneChange is the cost of one pod's change with 1,000 pods
// and 10 watchers: one op writes one pod's status and waits until every
// watcher has read its event. A watch that re-renders every pod on a wake
// costs 1,000 renderings per watcher per op; one that reads the store's
// changes costs one.
func BenchmarkWatchOneChange(b *testing.B) {
	const pods, watchers = 1000, 10
	f := newFixture(b, Options{})
	for i := range pods {
		f.pod(b, "file", "default", fmt.Sprintf("p%04d", i), nil, v1.PodStatus{})
	}
	events := make(chan struct{}, 64)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range watchers {
		req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/api/v1/pods?watch=true", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 1<<20)
			for n := 0; sc.Scan(); n++ {
				if n < pods {
					continue // the initial ADDED
				}
				select {
				case events <- struct{}{}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		key := fmt.Sprintf("default/p%04d", i%pods)
		if _, err := f.st.UpdatePod(key, func(p *model.Pod) bool {
			p.Status = v1.PodStatus{Phase: v1.PodRunning, Message: fmt.Sprint(i)}
			return true
		}); err != nil {
			b.Fatal(err)
		}
		for range watchers {
			<-events
		}
	}
}
