package store

import (
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/model"
)

// BenchmarkRecordEvent records one pod's event again and again, as a
// crash loop's BackOff or a refused manifest repeats: "repeated" aggregates
// every occurrence into one row. "distinct" gives each occurrence its own
// message, so each is a row of its own: the cost, and the rows, of keeping
// every occurrence, which is what the store did before it aggregated. rows
// is what the store keeps at the end (at most MaxEvents).
func BenchmarkRecordEvent(b *testing.B) {
	for _, distinct := range []bool{false, true} {
		name := "repeated"
		if distinct {
			name = "distinct"
		}
		b.Run(name, func(b *testing.B) {
			st, _ := New(nil)
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"}}
			if err := st.UpsertPod(&model.Pod{Key: "default/web", Source: "file", Spec: pod}); err != nil {
				b.Fatal(err)
			}
			rec := EventRecorder{Store: st}
			at := time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
			b.ReportAllocs()
			for i := range b.N {
				msg := "Back-off restarting failed container app"
				if distinct {
					msg += " " + strconv.Itoa(i)
				}
				rec.Record(events.Event{Time: at.Add(time.Duration(i) * time.Millisecond), Namespace: "default", Pod: "web",
					PodUID: "uid-web", Source: "file", Container: "app", Type: events.Warning, Reason: "BackOff", Message: msg})
			}
			b.StopTimer()
			rows, err := st.Snapshot().Events(nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(rows)), "rows")
		})
	}
}
