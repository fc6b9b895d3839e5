// Package nodelogs serves the node's log directory as the kubelet's
// /logs/ does, confined beneath it: no path or symlink leads out.
package nodelogs

import (
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
)

// Handler serves the files under dir as the kubelet's /logs/ does (an
// http.FileServer): the route's {path...} names a file, served with
// http.ServeContent (Range, If-Modified-Since), or a directory, listed in
// http.FileServer's HTML. Every request resolves its path from dir's
// descriptor in one openat2 call with RESOLVE_BENEATH and
// RESOLVE_NO_MAGICLINKS: "..", absolute paths and symlinks leading out of
// dir (at any step, whenever swapped in) are a 404, as is anything but
// regular files and directories. dir "" serves nothing (404).
func Handler(dir string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rel := r.PathValue("path")
		if dir == "" {
			http.Error(w, "node logs are disabled (server.node_logs_dir is empty)", http.StatusNotFound)
			return
		}
		f, err := openBeneath(dir, rel)
		if err != nil {
			http.Error(w, "404 page not found", http.StatusNotFound)
			return
		}
		defer f.Close()
		fi, err := f.Stat()
		switch {
		case err != nil:
			http.Error(w, "404 page not found", http.StatusNotFound)
		case fi.IsDir():
			if !strings.HasSuffix(r.URL.Path, "/") {
				w.Header().Set("Location", path.Base(r.URL.Path)+"/")
				w.WriteHeader(http.StatusMovedPermanently)
				return
			}
			listDir(w, f)
		case fi.Mode().IsRegular():
			http.ServeContent(w, r, fi.Name(), fi.ModTime(), f)
		default:
			http.Error(w, "404 page not found", http.StatusNotFound)
		}
	})
}

// cleanRel turns a request path into one relative to the served
// directory; ".." anywhere and NUL bytes are refused before the kernel
// sees them.
func cleanRel(rel string) (string, error) {
	if strings.ContainsRune(rel, 0) {
		return "", fs.ErrNotExist
	}
	var elems []string
	for _, e := range strings.Split(rel, "/") {
		switch e {
		case "..":
			return "", fs.ErrNotExist
		case "", ".":
		default:
			elems = append(elems, e)
		}
	}
	if len(elems) == 0 {
		return ".", nil
	}
	return strings.Join(elems, "/"), nil
}

// listDir writes d's entries as http.FileServer lists them.
func listDir(w http.ResponseWriter, d *os.File) {
	ents, err := d.ReadDir(-1)
	if err != nil {
		http.Error(w, "cannot read the directory", http.StatusInternalServerError)
		return
	}
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html>\n<meta name=\"viewport\" content=\"width=device-width\">\n<pre>\n")
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() {
			name += "/"
		}
		u := url.URL{Path: name}
		fmt.Fprintf(w, "<a href=\"%s\">%s</a>\n", html.EscapeString(u.String()), html.EscapeString(name))
	}
	fmt.Fprintf(w, "</pre>\n")
}
