package e2e

import (
	"bufio"
	"os"
	"strings"
	"syscall"
	"testing"
)

// unmountLeftovers detaches the subPath binds a stopped berth left under
// root (berth leaves its pods running when it stops, and their binds with
// them), so the test's temporary root_dir can be removed and the host's
// mount table is left as it was.
func unmountLeftovers(tb testing.TB, root string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		tb.Errorf("cleanup: %v", err)
		return
	}
	defer f.Close()
	var mps []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 4 && strings.HasPrefix(fields[4], root+"/") {
			mps = append(mps, fields[4])
		}
	}
	for i := len(mps) - 1; i >= 0; i-- { // the newest first
		if err := syscall.Unmount(mps[i], syscall.MNT_DETACH); err != nil {
			tb.Errorf("cleanup: unmount %s: %v", mps[i], err)
		}
	}
}
