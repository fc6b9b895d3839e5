package manifest

import (
	"encoding/json"
	"testing"
)

// countValues counts map entries and list items of a decoded JSON value,
// as ScanJSON counts them.
func countValues(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for _, c := range v {
			n += 1 + countValues(c)
		}
	case []any:
		for _, c := range v {
			n += 1 + countValues(c)
		}
	}
	return n
}

// TestScanJSONCounts: the scan counts what decoding would hold, whatever
// the strings hold (brackets, commas, escaped quotes and keys).
func TestScanJSONCounts(t *testing.T) {
	for _, doc := range []string{
		`{}`, `[]`, `[[]]`, `{"a":[1,2,3],"b":{"c":null,"d":true}}`,
		`{"a":"[,{\"}]\\","b":[" , ",{"x]":"{"}],"c\u005b":-1.5e3}`,
		`[{},{},{"a":[[],[{}]]}]`,
		` { "a" : [ 1 , "2" , false ] , "b" : { } } `,
	} {
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatal(err)
		}
		if s := ScanJSON([]byte(doc), ShapeLimits{}); s.Values != countValues(v) || s.Exceeded() {
			t.Errorf("%s: %d values, decoding has %d", doc, s.Values, countValues(v))
		}
	}
}

// TestScanJSONBounds: the first list past the bound is named by its path,
// a list in a list keeps the key holding the outer one, and escaped keys
// are decoded.
func TestScanJSONBounds(t *testing.T) {
	s := ScanJSON([]byte(`{"spec":{"containers":[{"name":"a"},{"env":[1,2,3,4]}]}}`), ShapeLimits{ListItems: 3})
	if s.TooLong == nil || s.TooLong.Path != "spec.containers[1].env" || s.TooLong.Key != "env" || s.TooLong.Items != 4 {
		t.Errorf("too long: %+v", s.TooLong)
	}
	s = ScanJSON([]byte(`{"a\"b":[[1,2],[1,2,3,4]]}`), ShapeLimits{ListItems: 3, Lists: true})
	if s.TooLong == nil || s.TooLong.Path != `a"b[1]` || s.TooLong.Key != `a"b` {
		t.Errorf("nested: %+v", s.TooLong)
	}
	if s := ScanJSON([]byte(`{"a":[1,2],"b":{"c":3}}`), ShapeLimits{Values: 4}); !s.TooMany {
		t.Errorf("5 values under a bound of 4: %+v", s)
	}
	s = ScanJSON([]byte(`{"$setElementOrder/containers":[{"name":"a"}],"containers":[{"name":"a"},{"name":"b"}]}`), ShapeLimits{Lists: true})
	if len(s.Lists) != 2 || s.Lists[0].Key != "$setElementOrder/containers" || s.Lists[1].Items != 2 {
		t.Errorf("lists %+v", s.Lists)
	}
	deep := make([]byte, 0, 2*maxShapeDepth+2)
	for range maxShapeDepth + 1 {
		deep = append(deep, '[')
	}
	if s := ScanJSON(deep, ShapeLimits{}); !s.TooDeep {
		t.Errorf("%d levels: not too deep", maxShapeDepth+1)
	}
	for _, junk := range []string{`"`, `{"a`, `]]]}}`, `{"a":[1,`, "\x00\xff", `{"a":"\`} {
		ScanJSON([]byte(junk), ShapeLimits{ListItems: 1, Values: 1}) // no panic
	}
}
