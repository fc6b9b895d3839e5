package store

import (
	"fmt"
	"testing"

	"github.com/berth-dev/berth/model"
	v1 "k8s.io/api/core/v1"
)

func filled(b *testing.B, pods int) *Store {
	s, _ := New(nil)
	for i := 0; i < pods; i++ {
		key := fmt.Sprintf("default/pod-%05d", i)
		_ = s.UpsertPod(&model.Pod{Key: key, Source: "file", Spec: &v1.Pod{}})
		for c := 0; c < 3; c++ {
			_, _ = s.UpsertContainer(&model.Container{ID: fmt.Sprintf("%s-%d", key, c), PodKey: key, State: model.StateRunning})
		}
	}
	return s
}

// Go benchmarks of the store at 10 000 pods and 30 000 containers:
//
//	go test -run '^$' -bench . ./store/
func BenchmarkStorePodGet(b *testing.B) {
	s := filled(b, 10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if p, _ := s.Pod(nil, fmt.Sprintf("default/pod-%05d", i%10000)); p == nil {
			b.Fatal("missing")
		}
	}
}

func BenchmarkStoreContainersByPod(b *testing.B) {
	s := filled(b, 10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if cs, _ := s.ContainersByPod(nil, fmt.Sprintf("default/pod-%05d", i%10000)); len(cs) != 3 {
			b.Fatal("missing")
		}
	}
}

func BenchmarkStoreUpsertContainer(b *testing.B) {
	s := filled(b, 10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		key := fmt.Sprintf("default/pod-%05d", i%10000)
		_, _ = s.UpsertContainer(&model.Container{ID: key + "-0", PodKey: key, State: model.StateExited})
	}
}

func BenchmarkStoreUpdatePodStatus(b *testing.B) {
	s := filled(b, 10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, _ = s.UpdatePod(fmt.Sprintf("default/pod-%05d", i%10000), func(p *model.Pod) bool { p.Status.Phase = v1.PodRunning; return true })
	}
}
