package jsonfield

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestNameAndElem(t *testing.T) {
	pod := reflect.TypeFor[v1.Pod]()
	for _, tc := range []struct {
		field, name string
		inline      bool
	}{{"TypeMeta", "", true}, {"ObjectMeta", "metadata", false}, {"Spec", "spec", false}} {
		sf, _ := pod.FieldByName(tc.field)
		if name, inline := Name(sf); name != tc.name || inline != tc.inline {
			t.Errorf("Name(%s) = %q, %v; want %q, %v", tc.field, name, inline, tc.name, tc.inline)
		}
	}
	for _, tc := range []struct {
		t, want reflect.Type
	}{
		{reflect.TypeFor[[]*v1.Container](), reflect.TypeFor[v1.Container]()},
		{reflect.TypeFor[map[string][2]*v1.Volume](), reflect.TypeFor[v1.Volume]()},
		{reflect.TypeFor[string](), reflect.TypeFor[string]()},
	} {
		if got := Elem(tc.t); got != tc.want {
			t.Errorf("Elem(%v) = %v, want %v", tc.t, got, tc.want)
		}
	}
}
