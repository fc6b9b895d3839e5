package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// typeErrorPath returns the path of a type error of decoding j with list
// indexes (spec.containers[1].livenessProbe), which encoding/json leaves out
// of te.Field. It finds the value that ends (a literal) or opens (an object
// or array) at te.Offset among the values whose path without indexes is
// te.Field; when the offset matches none (a nested custom decoder), it takes
// the first such value of te's JSON kind. Without a match it returns the
// path without indexes.
func typeErrorPath(j []byte, te *json.UnmarshalTypeError) string {
	want := jsonFieldPath(te.Field)
	var byKind string
	found := ""
	walkJSONValues(j, func(p []jsonSeg, kind string, end int64) bool {
		if stripIndexes(p) != want {
			return true
		}
		if end == te.Offset {
			found = formatSegs(p)
			return false
		}
		if byKind == "" && strings.HasPrefix(te.Value, kind) {
			byKind = formatSegs(p)
		}
		return true
	})
	switch {
	case found != "":
		return found
	case byKind != "":
		return byKind
	}
	return want
}

// jsonSeg is one step of a JSON path: an object key or a list index.
type jsonSeg struct {
	key   string
	index int // -1 for an object key
}

func stripIndexes(p []jsonSeg) string {
	var keys []string
	for _, s := range p {
		if s.index < 0 {
			keys = append(keys, s.key)
		}
	}
	return strings.Join(keys, ".")
}

func formatSegs(p []jsonSeg) string {
	var b strings.Builder
	for _, s := range p {
		if s.index >= 0 {
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
	}
	return b.String()
}

// walkJSONValues calls visit for every value of j, in order, with its path,
// its kind (object, array, string, number, bool, null) and the offset just
// after its literal or opening delimiter, until visit returns false.
func walkJSONValues(j []byte, visit func(p []jsonSeg, kind string, end int64) bool) {
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	type frame struct {
		array  bool
		key    string
		index  int
		hasKey bool
	}
	var stack []frame
	path := func() []jsonSeg {
		p := make([]jsonSeg, 0, len(stack))
		for _, f := range stack {
			if f.array {
				p = append(p, jsonSeg{index: f.index})
			} else {
				p = append(p, jsonSeg{key: f.key, index: -1})
			}
		}
		return p
	}
	next := func() { // a value of the innermost container is complete
		if n := len(stack); n > 0 {
			if stack[n-1].array {
				stack[n-1].index++
			} else {
				stack[n-1].hasKey = false
			}
		}
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) || err != nil {
			return
		}
		if n := len(stack); n > 0 && !stack[n-1].array && !stack[n-1].hasKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:n-1]
				next()
				continue
			}
			if key, ok := tok.(string); ok {
				stack[n-1].key, stack[n-1].hasKey = key, true
			}
			continue
		}
		end := dec.InputOffset()
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				kind := "object"
				if t == '[' {
					kind = "array"
				}
				if !visit(path(), kind, end) {
					return
				}
				stack = append(stack, frame{array: t == '['})
			case ']':
				stack = stack[:len(stack)-1]
				next()
			}
		default:
			kind := "null"
			switch tok.(type) {
			case string:
				kind = "string"
			case json.Number:
				kind = "number"
			case bool:
				kind = "bool"
			}
			if !visit(path(), kind, end) {
				return
			}
			next()
		}
	}
}
