package agent

import (
	"context"
	"fmt"

	"github.com/berth-dev/berth/server"
	"github.com/berth-dev/berth/sources"
	"github.com/berth-dev/berth/sources/filesource"
)

// fileSourceReady are the readiness checks of the file sources among srcs:
// not ready while sources.file.path does not exist. The source itself is
// synced then (its set is empty, as the kubelet has it), so this is what
// tells a mistyped --pods from a node with no pods.
func fileSourceReady(srcs []sources.Source) []server.Checker {
	var checks []server.Checker
	for _, s := range srcs {
		if fs, ok := s.(*filesource.Source); ok {
			checks = append(checks, func(context.Context) error {
				if err := fs.Missing(); err != nil {
					return fmt.Errorf("sources.file.path %w", err)
				}
				return nil
			})
		}
	}
	return checks
}
