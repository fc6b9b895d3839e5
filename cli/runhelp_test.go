package cli

import (
	"strings"
	"testing"
)

// berth run --help shows the default of every flag that has one.
func TestRunHelpShowsDefaults(t *testing.T) {
	out, _, err := execute(runCmd(), "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`(default "/etc/berth/pods")`, `(default "/var/lib/berth")`, `(default "127.0.0.1")`,
		`(default 10350)`, `(default "info")`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("berth run --help lacks %s:\n%s", want, out)
		}
	}
}
