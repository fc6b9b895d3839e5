package sources

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/manifest"
)

func TestValidateFilesWarnings(t *testing.T) {
	dir := t.TempDir()
	f := write(t, dir, "web.yaml", podYAML+"  serviceAccountName: sa\n")
	n, warns, errs, err := ValidateFiles([]string{dir}, manifest.Options{})
	if err != nil || len(errs) > 0 || n != 1 {
		t.Fatalf("n %d errs %v err %v", n, errs, err)
	}
	if want := f + ": default/web: ignored without a cluster: spec.serviceAccountName (no service accounts (still readable through the downward API))"; len(warns) != 1 || warns[0] != want {
		t.Errorf("warnings %q, want %q", warns, want)
	}
}

// A pod sent again as the same object with the same origin is not walked
// again for its warnings; a new object of the same spec is, and logs
// nothing new.
func TestWarnLogSkipsUnchangedPods(t *testing.T) {
	var buf testutil.SyncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	pods, errs := manifest.Decode("src", "o", []byte(podYAML+"  tolerations: [{key: k}]\n"), manifest.Options{})
	if len(errs) > 0 || len(pods) != 1 {
		t.Fatalf("decode: %v", errs)
	}
	plain, errs := manifest.Decode("src", "p", []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: plain}\nspec: {containers: [{name: a, image: i}]}\n"), manifest.Options{})
	if len(errs) > 0 || len(plain) != 1 {
		t.Fatalf("decode: %v", errs)
	}
	calls := 0
	w := warnLog{line: func(d manifest.Desired) string { calls++; return manifest.WarningLine(d) }}
	all := append(pods, plain...)
	w.log(log, all)
	w.log(log, all)
	if calls != 2 {
		t.Errorf("warning lines computed %d times for 2 pods sent twice, want 2", calls)
	}
	again := []manifest.Desired{{Pod: pods[0].Pod.DeepCopy(), Origin: pods[0].Origin}, plain[0]}
	w.log(log, again)
	if calls != 3 {
		t.Errorf("warning lines computed %d times after one pod was a new object, want 3", calls)
	}
	w.log(log, []manifest.Desired{{Pod: pods[0].Pod, Origin: "moved"}, plain[0]})
	if n := strings.Count(buf.String(), "ignored without a cluster"); n != 2 {
		t.Errorf("%d warning lines, want 2 (once, then for the new origin):\n%s", n, buf.String())
	}
}
