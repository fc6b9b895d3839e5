package manifest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Bounds on the shape of one object, checked by a scan of its JSON before
// it is decoded into Go values: decoding costs far more than the text (an
// empty container, `{},`, is three bytes of JSON and about a kilobyte
// decoded), so 1 MiB of JSON could cost gigabytes.
const (
	// MaxListItems bounds each list of an object. No list of an object
	// berth runs comes near it: containers are at most
	// max_containers_per_pod (DefaultMaxContainers; a source allowing more
	// may have that many), host ports 100, DNS searches 32; ConfigMap and
	// Secret data are maps, not lists.
	MaxListItems = 1000
	// MaxValues bounds the values (map entries and list items, at every
	// depth) of an object: a 1 MiB ConfigMap of 10-byte entries has
	// 100 000.
	MaxValues = 100000
	// maxShapeDepth bounds the nesting a scan follows, as encoding/json's
	// own limit.
	maxShapeDepth = 10000
)

// ShapeLimits are the bounds of a ScanJSON; a zero field is no bound.
type ShapeLimits struct {
	ListItems int
	Values    int
	// Lists asks ScanJSON to record every list (Shape.Lists).
	Lists bool
}

// Shape is what ScanJSON saw of a JSON text, up to where a bound stopped
// it.
type Shape struct {
	// Values counts map entries and list items at every depth.
	Values int
	// Lists are the lists seen, when ShapeLimits.Lists asked for them.
	Lists []ShapeList
	// TooLong is the first list found longer than ShapeLimits.ListItems
	// (its Items then just past the bound).
	TooLong *ShapeList
	// TooMany says Values passed ShapeLimits.Values.
	TooMany bool
	// TooDeep says the text nests deeper than encoding/json decodes.
	TooDeep bool
}

// Exceeded reports whether a bound stopped the scan.
func (s *Shape) Exceeded() bool { return s.TooLong != nil || s.TooMany || s.TooDeep }

// ShapeList is one list of a JSON text.
type ShapeList struct {
	Items int
	// Key is the map key holding the list (for a list in a list, the key
	// holding the outer one); "" at the top.
	Key string
	// Path is where the list is, as Kubernetes names fields
	// (spec.containers[0].env); set for Shape.TooLong only.
	Path string
}

// ScanJSON scans the JSON text j for its shape without decoding it: one
// pass, no allocation per value. It stops at the first bound of lim
// passed. j is not validated: on text that is not JSON the counts are
// meaningless but bounded, and decoding it fails later.
func ScanJSON(j []byte, lim ShapeLimits) Shape {
	sc := scanner{lim: lim}
	sc.scan(j)
	return sc.shape
}

type scanner struct {
	lim   ShapeLimits
	shape Shape
	stack []frame
}

// frame is one open map or list.
type frame struct {
	list bool
	n    int // items or entries so far
	// key is, in a map, the key of the current entry (raw string
	// contents); field is, in a list, the key holding it.
	key   []byte
	field string
	// wantKey says a map's next string is a key.
	wantKey bool
}

func (sc *scanner) scan(j []byte) {
	for i := 0; i < len(j); i++ {
		switch c := j[i]; c {
		case ' ', '\t', '\n', '\r', ':':
		case '"':
			start := i + 1
			for i++; i < len(j) && j[i] != '"'; i++ {
				if j[i] == '\\' {
					i++
				}
			}
			if top := sc.top(); top != nil && !top.list && top.wantKey {
				top.wantKey = false
				top.key = j[start:min(i, len(j))]
				if !sc.count(top) {
					return
				}
			} else if !sc.value() {
				return
			}
		case '{', '[':
			if !sc.value() {
				return
			}
			if len(sc.stack) >= maxShapeDepth {
				sc.shape.TooDeep = true
				return
			}
			f := frame{list: c == '['}
			if f.list {
				f.field = sc.field()
			} else {
				f.wantKey = true
			}
			sc.stack = append(sc.stack, f)
		case '}', ']':
			if len(sc.stack) == 0 {
				return
			}
			top := sc.stack[len(sc.stack)-1]
			sc.stack = sc.stack[:len(sc.stack)-1]
			if top.list && sc.lim.Lists {
				sc.shape.Lists = append(sc.shape.Lists, ShapeList{Items: top.n, Key: top.field})
			}
		case ',':
			if top := sc.top(); top != nil && !top.list {
				top.wantKey = true
			}
		default: // a number, true, false or null
			for i+1 < len(j) && !strings.ContainsRune(" \t\n\r,:]}\"[{", rune(j[i+1])) {
				i++
			}
			if !sc.value() {
				return
			}
		}
	}
}

func (sc *scanner) top() *frame {
	if len(sc.stack) == 0 {
		return nil
	}
	return &sc.stack[len(sc.stack)-1]
}

// value counts a value starting: an item when in a list (a map's entries
// are counted at their keys).
func (sc *scanner) value() bool {
	if top := sc.top(); top != nil && top.list {
		return sc.count(top)
	}
	return true
}

// count counts one entry or item of f; false when a bound is passed.
func (sc *scanner) count(f *frame) bool {
	f.n++
	sc.shape.Values++
	if f.list && sc.lim.ListItems > 0 && f.n > sc.lim.ListItems {
		sc.shape.TooLong = &ShapeList{Items: f.n, Key: f.field, Path: sc.path(len(sc.stack) - 1)}
		return false
	}
	if sc.lim.Values > 0 && sc.shape.Values > sc.lim.Values {
		sc.shape.TooMany = true
		return false
	}
	return true
}

// field is the key a list opening now is held by.
func (sc *scanner) field() string {
	top := sc.top()
	switch {
	case top == nil:
		return ""
	case top.list:
		return top.field
	}
	return unquoteKey(top.key)
}

// path renders where the value the first depth frames lead to is:
// spec.containers[0].env.
func (sc *scanner) path(depth int) string {
	var b strings.Builder
	for _, f := range sc.stack[:depth] {
		if f.list {
			b.WriteString("[" + strconv.Itoa(f.n-1) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(unquoteKey(f.key))
	}
	return b.String()
}

// unquoteKey decodes the contents of a JSON string.
func unquoteKey(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	var s string
	if json.Unmarshal([]byte(`"`+string(raw)+`"`), &s) != nil {
		return string(raw)
	}
	return s
}
