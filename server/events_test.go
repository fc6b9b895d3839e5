package server

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/metrics"
	"github.com/berth-dev/berth/store"
)

// GET /events serves an event occurring again as one entry with its
// count and last time, its time the first occurrence's.
func TestEventsListShowsRepeats(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(5000, 0).UTC())
	st, _ := store.New(nil, store.WithClock(clk))
	rec := store.EventRecorder{Store: st}
	e := events.Event{Namespace: "default", Pod: "web", Type: events.Warning, Reason: "BackOff", Message: "back-off"}
	for range 3 {
		rec.Record(e)
		clk.Step(time.Minute)
	}
	srv := httptest.NewServer(New(Options{Store: st, Registry: metrics.New().Registry, Tokens: []string{"t"}, Events: rec.List}))
	t.Cleanup(srv.Close)
	var got []map[string]any
	if err := json.NewDecoder(get(t, srv.URL+"/events?pod=web", "t").Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0]["count"] != 3.0 || got[0]["time"] != "1970-01-01T01:23:20Z" || got[0]["lastTime"] != "1970-01-01T01:25:20Z" {
		t.Fatalf("/events: %v, want one entry with count 3, time the first and lastTime the last occurrence", got)
	}
}
