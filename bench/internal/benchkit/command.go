package benchkit

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Main is a benchmark command's main: it parses the flags with parse (an
// error, named after cmd, exits 2), then runs run under a context that
// SIGINT or SIGTERM cancels, and exits with run's code once run returned,
// so run's deferred cleanup always happens. The berth processes a command
// starts are in their own process groups: a Ctrl-C reaches the command only.
func Main[O any](cmd string, parse func() (O, error), run func(ctx context.Context, opt O) int) {
	opt, err := parse()
	if err != nil {
		fmt.Fprintln(os.Stderr, cmd+":", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, opt)
	stop()
	os.Exit(code)
}
