package events

import (
	"fmt"
	"testing"
	"time"
)

func TestBufferKeepsNewestInOrder(t *testing.T) {
	b := NewBuffer(3)
	if len(b.List()) != 0 {
		t.Fatal("new buffer not empty")
	}
	for i := 0; i < 5; i++ {
		b.Record(Event{Reason: fmt.Sprint(i)})
	}
	got := b.List()
	if len(got) != 3 || got[0].Reason != "2" || got[2].Reason != "4" {
		t.Fatalf("got %+v", got)
	}
}

func TestKeyLayout(t *testing.T) {
	e := Event{Namespace: "default", Pod: "web", Time: time.Unix(1, 5)}
	if k := Key(e); k != "/events/default/web/1000000005" {
		t.Fatalf("key %s", k)
	}
}
