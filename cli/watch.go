package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/berth-dev/berth/server"
)

// watchPods is berth get pods -w: the pods as a table (or objects for -o
// json|yaml), then a row per change, until ctx ends (nil) or the stream
// does (an error). now stamps the AGE column. The table is the watch's own
// initial events, which end at its bookmark, so no change falls between a
// list and a watch.
func watchPods(ctx context.Context, c *apiClient, w io.Writer, f getFlags, now func() time.Time) error {
	resp, err := c.get(ctx, "/pods?watch=1&sendInitialEvents=true", 0)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer resp.Body.Close()

	p := &watchPrinter{w: w, f: f, t: &table{w: w}, now: now}
	var initial []server.WatchEvent
	inInitial := true
	dec := json.NewDecoder(resp.Body)
	for {
		var ev server.WatchEvent
		if err := dec.Decode(&ev); err != nil {
			if ctx.Err() != nil {
				return nil // interrupted
			}
			if err == io.EOF {
				return fmt.Errorf("berth at %s: the watch ended", c.server)
			}
			return fmt.Errorf("berth at %s: watch: %w", c.server, err)
		}
		switch {
		case ev.Type == server.WatchBookmark:
			if inInitial && ev.Object.Annotations[server.InitialEventsEnd] == "true" {
				inInitial = false
				if err := p.print(true, initial...); err != nil {
					return err
				}
			}
		case inInitial:
			initial = append(initial, ev)
		default:
			if err := p.print(false, ev); err != nil {
				return err
			}
		}
	}
}

// watchPrinter prints watch events as berth get pods would print their
// pods: table rows (a header only before the first batch) or objects.
type watchPrinter struct {
	w   io.Writer
	f   getFlags
	t   *table
	now func() time.Time
}

func (p *watchPrinter) print(first bool, evs ...server.WatchEvent) error {
	switch p.f.output {
	case "json", "yaml":
		for _, ev := range evs {
			var v any = ev.Object
			if p.f.watchEvents {
				v = ev
			}
			var err error
			if p.f.output == "json" {
				err = printJSON(p.w, v)
			} else {
				if _, err = io.WriteString(p.w, "---\n"); err == nil {
					err = printYAML(p.w, v)
				}
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	wide := p.f.output == "wide"
	var rows [][]string
	if first {
		rows = append(rows, p.withEvent("EVENT", podHeader(wide)))
	}
	for i := range evs {
		rows = append(rows, p.withEvent(evs[i].Type, podRow(&evs[i].Object, wide, p.now())))
	}
	return p.t.write(rows...)
}

func (p *watchPrinter) withEvent(typ string, row []string) []string {
	if !p.f.watchEvents {
		return row
	}
	return append([]string{typ}, row...)
}
