package cli

import (
	"strings"
	"testing"
)

// completions runs cobra's hidden __complete command and returns the
// offered words (the last line, ":<directive>", dropped).
func completions(t *testing.T, args ...string) []string {
	t.Helper()
	out, _, err := runCLI(t, append([]string{"__complete"}, args...)...)
	if err != nil {
		t.Fatalf("__complete %v: %v", args, err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], ":") {
		t.Fatalf("__complete %v: no directive line in %q", args, out)
	}
	return lines[:len(lines)-1]
}

func TestPodNameCompletion(t *testing.T) {
	a := newCLIAPI(t)
	a.addPod(t, "default", "web", "app")
	a.addPod(t, "default", "worker", "app")
	a.addPod(t, "default", "db", "app")
	a.addPod(t, "other", "cache", "app")
	fl := a.flags()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append([]string{"logs"}, append(fl, "")...), "db web worker"},
		{append([]string{"logs"}, append(fl, "w")...), "web worker"},
		{append([]string{"logs", "-n", "other"}, append(fl, "")...), "cache"},
		{append([]string{"logs", "web"}, append(fl, "")...), ""}, // one POD only
		{append([]string{"exec"}, append(fl, "")...), "db web worker"},
		{append([]string{"describe"}, append(fl, "")...), "pod db web worker"},
		{append([]string{"describe", "pod"}, append(fl, "")...), "db web worker"},
		{append([]string{"describe"}, append(fl, "wo")...), "worker"},
		{[]string{"logs", "--server", closedURL(t), ""}, ""}, // unreachable: nothing
		{[]string{"logs", "--server", a.url, ""}, ""},        // refused (no token): nothing
	} {
		if got := strings.Join(completions(t, tc.args...), " "); got != tc.want {
			t.Errorf("__complete %s: %q, want %q", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}

func TestCompletionScripts(t *testing.T) {
	for shell, marker := range map[string]string{
		"bash": "__start_berth", "zsh": "#compdef berth", "fish": "complete -c berth", "powershell": "Register-ArgumentCompleter",
	} {
		out, _, err := runCLI(t, "completion", shell)
		if err != nil || !strings.Contains(out, marker) {
			t.Errorf("berth completion %s: %v, output lacks %q (%d bytes)", shell, err, marker, len(out))
		}
	}
}
