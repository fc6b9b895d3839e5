// Command kubectl is the real kubectl (k8s.io/kubectl at the release of
// berth's other k8s.io modules), built by the e2e tests to run against a
// real berth. It lives in its own module so that kubectl never enters
// berth's binary or go.mod; it is a test tool, not something berth ships.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
