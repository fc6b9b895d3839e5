package runtime

import (
	"context"
	"io"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/pkg/stdcopy"
)

// relayResizes applies each size from resize with apply until ended is
// closed or ctx ends. Best effort, as the docker CLI: a size that arrives as
// the process ends is of no use.
func relayResizes(ctx context.Context, ended <-chan struct{}, resize <-chan TermSize, apply func(TermSize)) {
	for {
		select {
		case <-ended:
			return
		case <-ctx.Done():
			return
		case sz := <-resize:
			apply(sz)
		}
	}
}

// relayOutput copies att's output to stdout and stderr (nil: discarded),
// one stream as is with a TTY, else demultiplexed, until it ends; it
// returns ctx's error, having closed att, when ctx ends first, and nil at
// the output's EOF.
func relayOutput(ctx context.Context, att types.HijackedResponse, tty bool, stdout, stderr io.Writer) error {
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	copied := make(chan error, 1)
	go func() {
		var err error
		if tty {
			_, err = io.Copy(stdout, att.Reader)
		} else {
			_, err = stdcopy.StdCopy(stdout, stderr, att.Reader)
		}
		copied <- err
	}()
	select {
	case <-ctx.Done():
		att.Close()
		<-copied
		return ctx.Err()
	case err := <-copied:
		if err == io.EOF {
			err = nil
		}
		return err
	}
}
