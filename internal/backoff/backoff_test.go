package backoff

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestDoublesToMaxAndResets(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	tr := New(Policy{Initial: time.Second, Max: 5 * time.Second}, clk)
	if at := tr.RetryAt("a"); !at.IsZero() {
		t.Fatalf("unknown key: RetryAt %v, want zero", at)
	}
	var got []time.Duration
	for range 5 {
		got = append(got, tr.Failed("a"))
		clk.Step(time.Hour) // no expiry: an hour between failures still doubles
	}
	want := []time.Duration{1, 2, 4, 5, 5}
	for i := range want {
		if got[i] != want[i]*time.Second {
			t.Fatalf("delays %v, want %v seconds", got, want)
		}
	}
	if at := tr.RetryAt("a"); !at.Equal(clk.Now().Add(-time.Hour + 5*time.Second)) {
		t.Fatalf("RetryAt %v", at)
	}
	if d, ok := tr.Delay("a"); !ok || d != 5*time.Second {
		t.Fatalf("Delay = %v %v", d, ok)
	}
	tr.Reset("a")
	if d, ok := tr.Delay("a"); ok || d != 0 {
		t.Fatalf("after Reset: Delay = %v %v", d, ok)
	}
	if d := tr.Failed("a"); d != time.Second {
		t.Fatalf("after Reset: Failed = %v, want 1s", d)
	}
}

func TestForgetPrefix(t *testing.T) {
	tr := New(Policy{Initial: time.Second, Max: time.Minute}, clocktesting.NewFakeClock(time.Unix(0, 0)))
	tr.Failed("pod1/a")
	tr.Failed("pod1/b")
	tr.Failed("pod2/a")
	tr.Forget("pod1/")
	if tr.Len() != 1 {
		t.Fatalf("Len %d after Forget, want 1", tr.Len())
	}
	if _, ok := tr.Delay("pod2/a"); !ok {
		t.Fatal("pod2/a forgotten")
	}
}
