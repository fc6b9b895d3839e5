package sources

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkPushPut: one write through the push source with N objects
// already pushed, as the API makes it: Put a ConfigMap of about 64 KiB,
// then the snapshot Run sends for it. The cost of one write must not grow
// with N (each write used to decode every pushed file again).
func BenchmarkPushPut(b *testing.B) {
	value := strings.Repeat("x", 64<<10)
	cm := func(name string) []byte {
		return []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: default}\ndata:\n  v: \"" + value + "\"\n")
	}
	for _, n := range []int{10, 100, 400} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			s := NewPushSource("push", filepath.Join(b.TempDir(), "push"), Options{})
			for i := range n {
				name := fmt.Sprintf("cm-%d", i)
				if _, err := s.Put("ConfigMap", "default", name, cm(name), PutOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			s.scan()
			data := cm("written")
			b.ResetTimer()
			for range b.N {
				if _, err := s.Put("ConfigMap", "default", "written", data, PutOptions{Replace: true}); err != nil {
					b.Fatal(err)
				}
				if u := s.scan(); len(u.Objects) != n+1 {
					b.Fatalf("%d objects, want %d", len(u.Objects), n+1)
				}
			}
		})
	}
}
