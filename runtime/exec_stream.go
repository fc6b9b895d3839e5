package runtime

import (
	"errors"
	"io"
)

// TermSize is a terminal size in character cells.
type TermSize struct {
	Width  uint16 `json:"width"`
	Height uint16 `json:"height"`
}

// ExecOptions describe one interactive command for ExecStream.
type ExecOptions struct {
	Cmd []string
	// Stdin, when not nil, is attached to the command; its EOF closes the
	// command's stdin. ExecStream does not wait for a Read blocked in Stdin:
	// the caller unblocks it after ExecStream returned (closes a pipe or
	// connection), which ends the goroutine copying it.
	Stdin io.Reader
	// Stdout and Stderr receive the command's output (nil: discarded). With
	// TTY the terminal merges both into Stdout.
	Stdout io.Writer
	Stderr io.Writer
	// TTY gives the command a terminal.
	TTY bool
	// Resize, when not nil, carries terminal sizes to apply (TTY only), as
	// they arrive, until the command ends; the sender must select on its own
	// context, as nothing reads Resize after ExecStream returned.
	Resize <-chan TermSize
}

// ErrNotRunning is returned (wrapped) by ExecStream when the container
// exists but does not run.
var ErrNotRunning = errors.New("container not running")
