package filesource

import (
	"testing"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/sources"
)

// startSource runs s until the test ends and returns its updates.
func startSource(t *testing.T, s *Source) <-chan sources.Update {
	t.Helper()
	return testutil.StartRun(t, s.Run)
}

// runStoppable runs s until stop (testutil.RunStoppable).
func runStoppable(t *testing.T, s *Source) (<-chan sources.Update, func()) {
	t.Helper()
	return testutil.RunStoppable(t, s.Run)
}

// waitBlockedIn waits until a goroutine is blocked in a select in fn, a
// function of this package (as "(*Source).scanAndSend").
func waitBlockedIn(t *testing.T, fn string) {
	t.Helper()
	testutil.WaitBlockedIn(t, "berth/sources/filesource."+fn)
}

var (
	runReturned = testutil.RunReturned
	write       = testutil.WriteFile
)

func podImage(u sources.Update, name string) string {
	for _, d := range u.Pods {
		if d.Pod.Name == name {
			return d.Pod.Spec.Containers[0].Image
		}
	}
	return ""
}
