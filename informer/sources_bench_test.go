package informer

import (
	"fmt"
	"testing"

	"github.com/berth-dev/berth/admission"
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/sources"
	"github.com/berth-dev/berth/store"
)

// BenchmarkApplyOneChange is one update of a source of n pods that adds or
// removes one pod, the others sent again as the same objects (as the etcd
// source sends them), with node facts set as the agent sets them: the
// per-pod part of a put through etcd. The cost should hardly grow with n.
func BenchmarkApplyOneChange(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			st, err := store.New(func(string) {})
			if err != nil {
				b.Fatal(err)
			}
			inf := NewSourceInformer(st, nil, nil, nil)
			inf.Node = &admission.Node{Name: "n", OS: "linux", CPUMilli: 1 << 30, Memory: 1 << 50}
			var pods []manifest.Desired
			for i := range n {
				d, errs := manifest.Decode("etcd", fmt.Sprintf("/pods/default/p%04d", i), []byte(fmt.Sprintf(
					`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%04d"},"spec":{"containers":[{"name":"app","image":"app:1",`+
						`"ports":[{"containerPort":8080,"hostPort":%d}],"resources":{"requests":{"cpu":"10m","memory":"16Mi"}}}]}}`, i, 20000+i)),
					manifest.Options{Node: "n"})
				if len(errs) > 0 {
					b.Fatal(errs)
				}
				pods = append(pods, d...)
			}
			if err := inf.Apply(sources.Update{Source: "etcd", Pods: pods}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				u := sources.Update{Source: "etcd", Pods: pods[:n-i%2]}
				if err := inf.Apply(u); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
