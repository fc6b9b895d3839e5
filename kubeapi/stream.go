package kubeapi

import "github.com/berth-dev/berth/kubeapi/stream"

// AddStreams adds pods/log (AccessRead), pods/exec, pods/portforward and,
// when rt is a stream.Attacher, pods/attach (AccessExec) running on rt
// (package stream serves them). Call it once, before Routes.
func (a *API) AddStreams(rt stream.Runtime) {
	for _, r := range stream.Routes(stream.Options{Store: a.o.Store, Visible: a.o.Visible, Clock: a.o.Clock}, rt) {
		acc := AccessRead
		if r.Exec {
			acc = AccessExec
		}
		a.handle(r.Pattern, acc, r.Handler)
	}
}
