// Command buildimage packages one static executable FROM scratch as a Docker
// image through the engine API (no registry, no docker CLI needed):
//
//	go run ./hack/buildimage -tag berth/testapp:1 -binary bin/testapp -path /testapp
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/berth-dev/berth/runtime"
)

func main() {
	tag := flag.String("tag", "", "image tag to build")
	binary := flag.String("binary", "", "static executable to package")
	path := flag.String("path", "/app", "path of the executable inside the image")
	flag.Parse()
	if *tag == "" || *binary == "" {
		fmt.Fprintln(os.Stderr, "usage: buildimage -tag TAG -binary FILE [-path /in/image]")
		os.Exit(2)
	}
	rt, err := runtime.NewDocker("")
	if err != nil {
		fmt.Fprintln(os.Stderr, "buildimage:", err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := rt.BuildImage(ctx, *tag, *binary, *path, []string{*path}); err != nil {
		fmt.Fprintln(os.Stderr, "buildimage:", err)
		os.Exit(1)
	}
	fmt.Println("built", *tag)
}
