package manifest

import (
	"bytes"
	"errors"
	"fmt"

	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// Bounds on what YAML aliases may expand a document to. An alias repeats
// its anchor's node, and converting YAML to JSON writes every repetition
// out: 100 KB referenced by 1 000 aliases is 100 MB of JSON from a 110 KB
// document, and gigabytes once decoded. The YAML library's own check
// counts nodes, not bytes, and lets that through. No legitimate manifest
// expands beyond the API server's object limit, so a document that uses
// aliases is refused, before it is expanded, when its expansion passes
// either bound; documents without aliases are not affected.
const (
	// MaxExpandedBytes bounds the JSON of a document with aliases: 1 MiB,
	// the largest manifest the push API and the Kubernetes API store.
	MaxExpandedBytes = 1 << 20
	// MaxExpandedValues bounds the values (map entries and list items) of
	// a document with aliases, as MaxValues bounds an object's.
	MaxExpandedValues = MaxValues
)

// ExpansionError is a YAML document refused because its aliases expand it
// past MaxExpandedBytes or MaxExpandedValues.
type ExpansionError struct {
	Bytes, Values int64 // the expansion's size, up to where it passed a bound
	Aliases       int   // the aliases of the document
}

func (e *ExpansionError) Error() string {
	return fmt.Sprintf("YAML aliases expand this document to more than %d bytes of JSON or %d values (%d aliases): "+
		"berth refuses documents whose aliases expand them past either; write the repeated values out",
		MaxExpandedBytes, MaxExpandedValues, e.Aliases)
}

// YAMLToJSON converts one YAML document (the first of doc) to JSON as
// sigs.k8s.io/yaml's YAMLToJSON does (YAMLToJSONStrict when strict:
// duplicate keys are errors). A document with aliases is first measured,
// unexpanded, and refused with an *ExpansionError when its expansion
// passes the bounds above.
func YAMLToJSON(doc []byte, strict bool) ([]byte, error) {
	if err := checkExpansion(doc); err != nil {
		return nil, err
	}
	if strict {
		return yaml.YAMLToJSONStrict(doc)
	}
	return yaml.YAMLToJSON(doc)
}

// checkExpansion measures the first document of doc with its aliases
// written out, without writing them out.
func checkExpansion(doc []byte) error {
	if bytes.IndexByte(doc, '*') < 0 {
		return nil // every alias starts with '*'
	}
	var root yaml3.Node
	if err := yaml3.Unmarshal(doc, &root); err != nil {
		// The converter's parser may differ on the error; this one's
		// parse was the only safe one to attempt.
		return fmt.Errorf("error converting YAML to JSON: %w", err)
	}
	m := measurer{memo: map[*yaml3.Node]expansion{}, active: map[*yaml3.Node]bool{}}
	e, err := m.measure(&root)
	var ee *ExpansionError
	switch {
	case errors.As(err, &ee):
		ee.Aliases = m.aliases
		return ee
	case err != nil:
		return err
	case m.aliases > 0 && (e.bytes > MaxExpandedBytes || e.values > MaxExpandedValues):
		return &ExpansionError{Bytes: e.bytes, Values: e.values, Aliases: m.aliases}
	}
	return nil
}

// expansion is the size of a node written out as JSON: its bytes (an
// estimate within a few bytes a scalar) and its values.
type expansion struct{ bytes, values int64 }

// measurer measures nodes once each: an alias costs what its anchor's
// node does, looked up, so a document of n nodes costs O(n) however much
// its aliases multiply.
type measurer struct {
	memo    map[*yaml3.Node]expansion
	active  map[*yaml3.Node]bool // being measured: an alias to one is a loop
	aliases int
}

func (m *measurer) measure(n *yaml3.Node) (expansion, error) {
	if e, ok := m.memo[n]; ok {
		return e, nil
	}
	m.active[n] = true
	defer delete(m.active, n)
	var e expansion
	switch n.Kind {
	case yaml3.DocumentNode:
		e.bytes = 4 // null
		for _, c := range n.Content {
			ce, err := m.measure(c)
			if err != nil {
				return e, err
			}
			e = ce
		}
	case yaml3.ScalarNode:
		e.bytes = jsonStringSize(n.Value)
	case yaml3.AliasNode:
		m.aliases++
		if n.Alias == nil || m.active[n.Alias] {
			return e, fmt.Errorf("error converting YAML to JSON: yaml: line %d: alias %q refers to a node containing itself", n.Line, n.Value)
		}
		ae, err := m.measure(n.Alias)
		if err != nil {
			return e, err
		}
		e = ae
	case yaml3.SequenceNode, yaml3.MappingNode:
		e.bytes = 2
		for _, c := range n.Content {
			ce, err := m.measure(c)
			if err != nil {
				return e, err
			}
			e.bytes += ce.bytes + 1 // a comma or a colon
			e.values += ce.values
		}
		if n.Kind == yaml3.MappingNode {
			e.values += int64(len(n.Content) / 2)
		} else {
			e.values += int64(len(n.Content))
		}
	}
	if m.aliases > 0 && (e.bytes > MaxExpandedBytes || e.values > MaxExpandedValues) {
		return e, &ExpansionError{Bytes: e.bytes, Values: e.values}
	}
	m.memo[n] = e
	return e, nil
}

// jsonStringSize bounds the JSON of a scalar written as a string:
// quotes, and an escape for each byte encoding/json escapes.
func jsonStringSize(s string) int64 {
	n := int64(len(s)) + 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c == '<', c == '>', c == '&':
			n += 5 // \u00XX
		case c == '"', c == '\\':
			n++
		}
	}
	return n
}
