// Package jsonfield reads the JSON shape of the Kubernetes API's Go types,
// for manifest's field suggestions and validation's field table.
package jsonfield

import (
	"reflect"
	"strings"
)

// Name returns the JSON name of a struct field, and whether the field is an
// embedded struct whose fields are inlined.
func Name(sf reflect.StructField) (name string, inline bool) {
	name, _, _ = strings.Cut(sf.Tag.Get("json"), ",")
	return name, sf.Anonymous && name == ""
}

// Elem returns t with its pointers, slices, maps and arrays taken off: the
// type of the values a field of type t holds.
func Elem(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	return t
}
