package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"

	"github.com/berth-dev/berth/internal/jsonfield"
)

// badValue is a value of a JSON document that does not decode into the Go
// type its field has: a type mismatch, or a value its type's UnmarshalJSON
// refuses (a quantity "12xx").
type badValue struct {
	path       *field.Path
	start, end int // byte span in the document
	msg        string
}

// badValues returns, in document order, every value of the valid JSON
// document j that fails to decode into its field of t. The contents of a bad
// value are not examined. Values of no field (unknown fields) are not
// examined either: the strict decode reports them.
func badValues(j []byte, t reflect.Type) []badValue {
	w := &typedWalker{j: j}
	w.value(0, t, nil)
	return w.bad
}

// withoutValues returns j with each bad value replaced by null, which leaves
// its field zero.
func withoutValues(j []byte, bad []badValue) []byte {
	out := make([]byte, 0, len(j))
	last := 0
	for _, b := range bad {
		out = append(out, j[last:b.start]...)
		out = append(out, "null"...)
		last = b.end
	}
	return append(out, j[last:]...)
}

type typedWalker struct {
	j   []byte
	bad []badValue
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// value walks the value at i, which decodes into t (nil: no Go type), and
// returns the offset after it.
func (w *typedWalker) value(i int, t reflect.Type, path *field.Path) int {
	i = skipSpace(w.j, i)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && t.Kind() == reflect.Interface {
		t = nil
	}
	start := i
	if i >= len(w.j) {
		return i
	}
	descend := t != nil && !reflect.PointerTo(t).Implements(unmarshalerType)
	switch c := w.j[i]; {
	case c == '{' && descend && (t.Kind() == reflect.Struct || t.Kind() == reflect.Map):
		return w.object(i, t, path)
	case c == '[' && descend && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && t.Elem().Kind() != reflect.Uint8:
		return w.array(i, t, path)
	case c == '{':
		i = w.object(i, nil, path)
	case c == '[':
		i = w.array(i, nil, path)
	default:
		i = skipLiteral(w.j, i)
	}
	if t != nil {
		w.check(start, i, t, path)
	}
	return i
}

// check records the value j[start:end] when it does not decode into t.
func (w *typedWalker) check(start, end int, t reflect.Type, path *field.Path) {
	raw := w.j[start:end]
	err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, reflect.New(t).Interface())
	if err == nil {
		return
	}
	var msg string
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		msg = fmt.Sprintf("Invalid value: %s: expected %s", te.Value, te.Type)
	} else {
		shown := string(raw)
		if s, uerr := strconv.Unquote(shown); uerr == nil {
			shown = s
		} else if len(shown) > 64 {
			shown = shown[:64] + "..."
		}
		msg = field.Invalid(nil, shown, jsonMessage(err)).ErrorBody()
	}
	w.bad = append(w.bad, badValue{path: path, start: start, end: end, msg: msg})
}

// object walks an object at i as t (a struct, a map, or nil).
func (w *typedWalker) object(i int, t reflect.Type, path *field.Path) int {
	i++ // {
	for {
		i = skipSpace(w.j, i)
		if i >= len(w.j) {
			return i
		}
		switch w.j[i] {
		case '}':
			return i + 1
		case ',':
			i++
			continue
		}
		keyEnd := skipLiteral(w.j, i)
		var key string
		_ = json.Unmarshal(w.j[i:keyEnd], &key)
		i = skipSpace(w.j, keyEnd)
		if i < len(w.j) && w.j[i] == ':' {
			i++
		}
		var ft reflect.Type
		var fp *field.Path
		switch {
		case t == nil:
		case t.Kind() == reflect.Map:
			ft, fp = t.Elem(), path.Key(key)
		default:
			if f, ok := jsonFields(t)[key]; ok {
				ft, fp = f, path.Child(key)
			}
		}
		if fp == nil {
			fp = path.Child(key)
		}
		i = w.value(i, ft, fp)
	}
}

// array walks an array at i as t (a slice or array type, or nil).
func (w *typedWalker) array(i int, t reflect.Type, path *field.Path) int {
	i++ // [
	var et reflect.Type
	if t != nil {
		et = t.Elem()
	}
	for n := 0; ; {
		i = skipSpace(w.j, i)
		if i >= len(w.j) {
			return i
		}
		switch w.j[i] {
		case ']':
			return i + 1
		case ',':
			i++
			continue
		}
		i = w.value(i, et, path.Index(n))
		n++
	}
}

var jsonFieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// jsonFields maps the JSON names of struct t's fields, those of inlined
// embedded structs included, to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := jsonFieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for i := range t.NumField() {
			sf := t.Field(i)
			name, inline := jsonfield.Name(sf)
			switch {
			case inline:
				ft := sf.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					add(ft)
				}
			case !sf.IsExported() || name == "-":
			case name == "":
				m[sf.Name] = sf.Type
			default:
				m[name] = sf.Type
			}
		}
	}
	add(t)
	jsonFieldCache.Store(t, m)
	return m
}

func skipSpace(j []byte, i int) int {
	for i < len(j) && (j[i] == ' ' || j[i] == '\t' || j[i] == '\n' || j[i] == '\r') {
		i++
	}
	return i
}

// skipLiteral returns the offset after the string, number, true, false or
// null at i.
func skipLiteral(j []byte, i int) int {
	if i < len(j) && j[i] == '"' {
		for i++; i < len(j); i++ {
			switch j[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return i
	}
	for i < len(j) {
		switch j[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}
