package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/berth-dev/berth/kubeapi/stream"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

// LogSource streams a container's logs (runtime.Runtime satisfies it).
type LogSource interface {
	Logs(ctx context.Context, id string, opts runtime.LogOptions) (io.ReadCloser, error)
}

// RegisterLogs serves GET /containerLogs/{ns}/{pod}/{container} with the
// kubelet's query parameters follow, tailLines, previous and timestamps:
// the logs of the pod's own containers (podIncarnation).
func RegisterLogs(s *Server, src LogSource) {
	s.Handle("GET /containerLogs/{ns}/{pod}/{container}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveLogs(w, r, s.opts.Store, src)
	}))
}

func boolParam(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		_, present := r.URL.Query()[name]
		return present, nil // "?follow" alone means true
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("query parameter %s: %q is not a boolean", name, v)
	}
	return b, nil
}

func serveLogs(w http.ResponseWriter, r *http.Request, st *store.Store, src LogSource) {
	key := r.PathValue("ns") + "/" + r.PathValue("pod")
	name := r.PathValue("container")
	opts := runtime.LogOptions{TailLines: -1}
	var err error
	var previous bool
	for param, dst := range map[string]*bool{"follow": &opts.Follow, "previous": &previous, "timestamps": &opts.Timestamps} {
		if *dst, err = boolParam(r, param); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	if v := r.URL.Query().Get("tailLines"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			http.Error(w, fmt.Sprintf("query parameter tailLines: %q is not a non-negative integer", v), http.StatusBadRequest)
			return
		}
		opts.TailLines = n
	}

	ctrs, pod, err := podIncarnation(st, key)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var inst *model.Container
	if pod != nil {
		// A declared pod: the instance its status names, as pods/log.
		if inst, err = stream.LogInstance(pod, ctrs, name, previous); err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
	} else {
		// Containers left of a removed pod: the newest, or the one before.
		instances := stream.Instances(ctrs, name)
		idx := 0
		if previous {
			idx = 1
		}
		if len(instances) <= idx {
			what := "container"
			if previous {
				what = "previous terminated container"
			}
			http.Error(w, fmt.Sprintf("%s %q in pod %s not found", what, name, key), http.StatusNotFound)
			return
		}
		inst = instances[idx]
	}
	rc, err := src.Logs(r.Context(), inst.ID, opts)
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, runtime.ErrNotFound) {
			code = http.StatusNotFound
		}
		http.Error(w, err.Error(), code)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	fw := &flushWriter{w: w}
	if f, ok := w.(http.Flusher); ok && opts.Follow {
		fw.f = f
	}
	_, _ = io.Copy(fw, rc)
}

// flushWriter flushes after every write so followed logs arrive promptly.
type flushWriter struct {
	w io.Writer
	f http.Flusher
}

func (fw *flushWriter) Write(p []byte) (int, error) {
	n, err := fw.w.Write(p)
	if fw.f != nil {
		fw.f.Flush()
	}
	return n, err
}
