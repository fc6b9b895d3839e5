// Command berth is a node agent that makes the local Docker engine run the
// Kubernetes pods declared in its sources, and keeps them running.
package main

import (
	"os"

	"github.com/berth-dev/berth/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
