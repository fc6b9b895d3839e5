package main

// Raw rows go to CSV files beside the report, one per scenario, named
// <scenario>-<commit7>-<machine>.csv, so BENCHMARKS.md stays a summary.

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// resultFile is the path, relative to the module root, of scenario's raw
// rows for this run.
func (r *results) resultFile(opt options, scenario string) string {
	return r.machine.ResultFile(opt.results, scenario)
}

// csvMs renders d in milliseconds for a CSV cell ("" when unmeasured).
func csvMs(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return strconv.FormatFloat(msf(d), 'f', 1, 64)
}

// rawTables returns the raw rows of each scenario that ran, header first,
// by scenario name.
func (r *results) rawTables() map[string][][]string {
	out := map[string][][]string{}
	if st := r.start; st != nil {
		rows := [][]string{{"system", "n", "round", "total_ms", "first_create_ms", "compose_wall_ms", "berth_mean_pod_start_ms", "error"}}
		down := [][]string{{"system", "n", "round", "total_ms", "app_stop_median_ms", "sigkilled", "compose_wall_ms", "error"}}
		for _, run := range st.runs {
			total, first := csvMs(run.total), csvMs(run.firstCreate)
			if run.err != "" {
				total, first = "", ""
			}
			rows = append(rows, []string{run.system, strconv.Itoa(run.n), strconv.Itoa(run.run), total, first,
				csvMs(run.cmdWall), csvMs(run.berthMean), firstLine(run.err)})
			if run.err == "" {
				dt, stop := csvMs(run.down.total), csvMs(run.down.appStop)
				if run.down.err != "" {
					dt, stop = "", ""
				}
				down = append(down, []string{run.system, strconv.Itoa(run.n), strconv.Itoa(run.run), dt, stop,
					strconv.Itoa(run.down.sigkilled), csvMs(run.down.cmdWall), firstLine(run.down.err)})
			}
		}
		for w, ds := range st.sweep {
			for _, d := range ds {
				rows = append(rows, []string{fmt.Sprintf("%s-workers-%d", sysMinimal, w), strconv.Itoa(st.sweepN), "1", csvMs(d), "", "", "", ""})
			}
		}
		out["start"], out["teardown"] = rows, down
	}
	if fr := r.footprint; fr != nil {
		out["footprint"] = fr.table()
	}
	if rr := r.reaction; rr != nil {
		rows := [][]string{{"kind", "trial", "call_to_gone_ms", "gone_to_start_ms", "die_to_start_ms", "die_to_create_ms", "call_to_start_ms", "create_start_to_event_ms", "create_start_calls_ms"}}
		for _, k := range []struct {
			name string
			ts   []reactionTrial
		}{{"kill", rr.kill}, {"rm", rr.rm}} {
			for i, t := range k.ts {
				rows = append(rows, []string{k.name, strconv.Itoa(i + 1), csvMs(t.callToGone), csvMs(t.goneToStart),
					csvMs(t.dieToStart), csvMs(t.dieToCreate), csvMs(t.callToStart), "", ""})
			}
		}
		for i, d := range rr.dockerOnly {
			call := time.Duration(0)
			if i < len(rr.dockerCall) {
				call = rr.dockerCall[i]
			}
			rows = append(rows, []string{"docker-only", strconv.Itoa(i + 1), "", "", "", "", "", csvMs(d), csvMs(call)})
		}
		out["reaction"] = rows
	}
	if cr := r.configMap; cr != nil {
		out["configmap"] = cr.rows()
	}
	return out
}

// writeRaw writes the raw tables under root, each as r.resultFile names
// it, and returns the files written by scenario.
func (r *results) writeRaw(root string, opt options) (map[string]string, error) {
	files := map[string]string{}
	for scenario, rows := range r.rawTables() {
		rel := r.resultFile(opt, scenario)
		path := rel
		if !filepath.IsAbs(rel) {
			path = filepath.Join(root, rel)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		w := csv.NewWriter(f)
		err = w.WriteAll(rows)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("write %s: %w", rel, err)
		}
		files[scenario] = rel
	}
	return files, nil
}

// benchLines keeps the result lines of `go test -bench` output (the
// environment, the Benchmark rows, the verdict), not the tests' logs.
func benchLines(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		for _, p := range []string{"goos:", "goarch:", "pkg:", "cpu:", "Benchmark", "PASS", "FAIL", "ok ", "--- ", "panic:"} {
			if strings.HasPrefix(l, p) {
				keep = append(keep, l)
				break
			}
		}
	}
	return strings.Join(keep, "\n")
}
