package main

// Scenario 4b, ConfigMap update latency: one berth runs one pod mounting a
// ConfigMap volume (from the pods directory) and a hostPath directory. Each
// update renames a new ConfigMap file into the pods directory, as a config
// tool does, and times until the pod's container sees the new value in its
// file. The baseline writes the same value into the hostPath directory with
// the same atomic layout berth and the kubelet use (a new "..<time>"
// directory, then one rename of "..data"): the cost of the swap itself plus
// the observation, with no source, decoding or reconcile. The observer is
// testapp's /wait, inside the container: it sleeps on inotify events of the
// volume's directory and answers as soon as the file holds the value, so
// both clocks take no CPU while they wait. Updates alternate which system
// goes first.

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/berth-dev/berth/bench/internal/benchkit"
)

type configMapResults struct {
	berth, direct []time.Duration
}

// kubeletSyncPeriod is the kubelet's documented bound on a mounted
// ConfigMap's update: its sync period (1 minute by default) plus the
// ConfigMap cache's propagation delay.
const kubeletSyncPeriod = time.Minute

func (b *bench) runConfigMap(ctx context.Context, res *results) error {
	return b.repeat(ctx, res, "configmap", func() error {
		res.configMap = &configMapResults{}
		return b.configMap(ctx, res.configMap)
	})
}

func (b *bench) configMap(ctx context.Context, cr *configMapResults) error {
	bp, err := b.startBerth(ctx, b.node("cm"), nil)
	if err != nil {
		return err
	}
	defer b.finishBerth(bp)
	direct := filepath.Join(b.work, bp.node+"-direct")
	if err := os.MkdirAll(direct, 0o755); err != nil {
		return err
	}
	port := b.hostPort(0)
	if err := b.checkPorts(1); err != nil {
		return err
	}
	if err := bp.writePod("cm", configMapYAML("v0")); err != nil {
		return err
	}
	if err := bp.writePod("pod", configMapPod(bp.podName(0), port, direct)); err != nil {
		return err
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := waitValue(ctx, base, "/etc/cfg/v", "v0", 90*time.Second); err != nil {
		return fmt.Errorf("pod not serving its ConfigMap: %w\n%s", err, bp.logTail())
	}
	for i := 1; i <= b.opt.updates; i++ {
		order := []string{"direct", "berth"}
		if i%2 == 0 {
			order = []string{"berth", "direct"}
		}
		for _, sys := range order {
			val := fmt.Sprintf("%s-%d", sys, i)
			var d time.Duration
			var err error
			if sys == "berth" {
				d, err = timedUpdate(ctx, base, "/etc/cfg/v", val, func() error { return bp.writePod("cm", configMapYAML(val)) })
				cr.berth = append(cr.berth, d)
			} else {
				d, err = timedUpdate(ctx, base, "/etc/direct/v", val, func() error { return atomicWrite(direct, "v", val) })
				cr.direct = append(cr.direct, d)
			}
			if err != nil {
				return fmt.Errorf("update %d (%s): %w\n%s", i, sys, err, bp.logTail())
			}
		}
	}
	return nil
}

func configMapYAML(v string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bench-cm}\ndata: {v: %q}\n", v)
}

// configMapPod is the scenario's pod: testapp serving on hostPort, with
// the ConfigMap at /etc/cfg and the baseline's directory at /etc/direct.
func configMapPod(name string, hostPort int, direct string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  terminationGracePeriodSeconds: 2
  containers:
    - name: app
      image: %q
      args: [serve]
      env: [{name: PORT, value: "%d"}]
      ports: [{containerPort: %d, hostPort: %d, hostIP: 127.0.0.1}]
      volumeMounts:
        - {name: cfg, mountPath: /etc/cfg}
        - {name: direct, mountPath: /etc/direct}
  volumes:
    - name: cfg
      configMap: {name: bench-cm}
    - name: direct
      hostPath: {path: %q, type: Directory}
`, name, testImage, appPort, appPort, hostPort, direct)
}

// settleBeforeWrite is the quiet time between the container's "watching"
// and the write (not timed).
const settleBeforeWrite = 50 * time.Millisecond

// timedUpdate opens a /wait for path=want, and once the container watches,
// runs write and returns the time until the container saw the value.
func timedUpdate(ctx context.Context, base, path, want string, write func() error) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	q := url.Values{"path": {path}, "want": {want}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/wait?"+q.Encode(), nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || line != "watching\n" {
		return 0, fmt.Errorf("wait: %q %v", line, err)
	}
	// Let the connection go quiet before the clock starts, so that the
	// answer is not held behind the acknowledgement of "watching".
	if err := benchkit.SleepCtx(ctx, settleBeforeWrite); err != nil {
		return 0, err
	}
	t0 := time.Now()
	if err := write(); err != nil {
		return 0, err
	}
	line, err := r.ReadString('\n')
	d := time.Since(t0)
	if err != nil || line != "seen\n" {
		return 0, fmt.Errorf("wait for %s=%s: %q %v", path, want, strings.TrimSpace(line), err)
	}
	return d, nil
}

// waitValue waits until the container serves path holding want.
func waitValue(ctx context.Context, base, path, want string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	c := http.Client{Timeout: 2 * time.Second}
	last := ""
	for time.Now().Before(deadline) {
		resp, err := c.Get(base + "/file?path=" + url.QueryEscape(path))
		if err == nil {
			var sb strings.Builder
			_, _ = bufio.NewReader(resp.Body).WriteTo(&sb)
			resp.Body.Close()
			if sb.String() == want {
				return nil
			}
			last = sb.String()
		} else {
			last = err.Error()
		}
		if err := benchkit.SleepCtx(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("%s: %q after %s", path, last, timeout)
}

// atomicWrite makes dir/name hold value with the kubelet's layout: a new
// timestamped directory, a "..data" symlink renamed over, and name linked
// through it (made once), the old directory removed.
func atomicWrite(dir, name, value string) error {
	ts, err := os.MkdirTemp(dir, ".."+time.Now().UTC().Format("2006_01_02_15_04_05."))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ts, name), []byte(value), 0o644); err != nil {
		return err
	}
	old, _ := os.Readlink(filepath.Join(dir, "..data"))
	tmp := filepath.Join(dir, "..data_tmp")
	_ = os.Remove(tmp)
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		return err
	}
	if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
		if err := os.Symlink("..data/"+name, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	if old != "" {
		return os.RemoveAll(filepath.Join(dir, old))
	}
	return nil
}

// percentile is the p-th percentile (nearest rank) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	k := int(float64(len(s))*p/100+0.999999) - 1
	return s[max(0, min(k, len(s)-1))]
}

func (r *results) configMapSection(s *strings.Builder) {
	p := func(format string, args ...interface{}) { fmt.Fprintf(s, format, args...) }
	cr := r.configMap
	p("## 4b. ConfigMap update latency\n\n")
	p("One berth (default timings) runs one pod mounting a ConfigMap volume and a hostPath directory. An update renames a new ConfigMap file into the pods directory; "+
		"the time runs until the container's own file holds the new value, observed inside the container by testapp's `/wait` (inotify on the volume's directory, no polling). "+
		"Baseline (*direct*): the bench writes the same value into the hostPath directory with the kubelet's atomic layout (new `..<time>` directory, one rename of `..data`), "+
		"observed the same way: the swap and the observation with no source, decoding or reconcile. Updates alternate which goes first. "+
		"The kubelet's documented bound is its sync period (%s by default) plus the ConfigMap cache's propagation delay.\n\n", kubeletSyncPeriod)
	p("| | median | p99 | min–max | updates |\n|---|---|---|---|---|\n")
	for _, row := range []struct {
		name string
		ds   []time.Duration
	}{{"**berth**: file renamed → container sees the value", cr.berth}, {"direct: atomic write → container sees the value", cr.direct}} {
		sm := summarize(row.ds)
		p("| %s | %s | %s | %s–%s | %d |\n", row.name, msStr(sm.med), msStr(percentile(row.ds, 99)), msStr(sm.min), msStr(sm.max), sm.n)
	}
	bm, dm := summarize(cr.berth).med, summarize(cr.direct).med
	if dm > 0 {
		p("\nberth − direct (medians): %s ms; berth/kubelet sync period: %.4f.\n", msStr(bm-dm), float64(bm)/float64(kubeletSyncPeriod))
	}
	r.rawLink(s, "configmap", len(cr.berth)+len(cr.direct))
}

// configMapRows are the scenario's raw rows, header first.
func (cr *configMapResults) rows() [][]string {
	rows := [][]string{{"system", "update", "ms"}}
	for _, sys := range []struct {
		name string
		ds   []time.Duration
	}{{"berth", cr.berth}, {"direct", cr.direct}} {
		for i, d := range sys.ds {
			rows = append(rows, []string{sys.name, fmt.Sprint(i + 1), csvMs(d)})
		}
	}
	return rows
}
