package kubeapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// mergePatch applies an RFC 7386 JSON merge patch to doc (decoded JSON).
func mergePatch(doc, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	d, ok := doc.(map[string]any)
	if !ok {
		d = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(d, k)
			continue
		}
		d[k] = mergePatch(d[k], v)
	}
	return d
}

// jsonPatchOp is one operation of an RFC 6902 JSON patch.
type jsonPatchOp struct {
	Op    string           `json:"op"`
	Path  string           `json:"path"`
	From  string           `json:"from"`
	Value *json.RawMessage `json:"value"`
}

// maxJSONPatchOps bounds the operations of one patch, as the apiserver
// bounds them.
const maxJSONPatchOps = 10000

// jsonPatch applies the RFC 6902 patch p to doc and returns the result.
func jsonPatch(doc any, p []byte) (any, error) {
	var ops []jsonPatchOp
	if err := json.Unmarshal(p, &ops); err != nil {
		return nil, fmt.Errorf("the patch is not a JSON array of operations: %v", err)
	}
	if len(ops) > maxJSONPatchOps {
		return nil, fmt.Errorf("the patch has %d operations, more than %d", len(ops), maxJSONPatchOps)
	}
	for i, op := range ops {
		var err error
		if doc, err = applyOp(doc, op); err != nil {
			return nil, fmt.Errorf("operation %d (%s %s): %v", i, op.Op, op.Path, err)
		}
	}
	return doc, nil
}

func applyOp(doc any, op jsonPatchOp) (any, error) {
	value := func() (any, error) {
		if op.Value == nil {
			return nil, fmt.Errorf("no value")
		}
		return decodeAny(*op.Value)
	}
	switch op.Op {
	case "add":
		v, err := value()
		if err != nil {
			return nil, err
		}
		return setAt(doc, op.Path, v, true)
	case "replace":
		v, err := value()
		if err != nil {
			return nil, err
		}
		if _, err := getAt(doc, op.Path); err != nil {
			return nil, err
		}
		return setAt(doc, op.Path, v, false)
	case "remove":
		return removeAt(doc, op.Path)
	case "test":
		v, err := value()
		if err != nil {
			return nil, err
		}
		cur, err := getAt(doc, op.Path)
		if err != nil {
			return nil, err
		}
		if !reflect.DeepEqual(normNumbers(cur), normNumbers(v)) {
			return nil, fmt.Errorf("test failed: the value differs")
		}
		return doc, nil
	case "move", "copy":
		v, err := getAt(doc, op.From)
		if err != nil {
			return nil, err
		}
		if op.Op == "move" {
			if strings.HasPrefix(op.Path, op.From+"/") {
				return nil, fmt.Errorf("cannot move a value into itself")
			}
			if doc, err = removeAt(doc, op.From); err != nil {
				return nil, err
			}
		} else {
			raw, _ := json.Marshal(v)
			v, _ = decodeAny(raw)
		}
		return setAt(doc, op.Path, v, true)
	}
	return nil, fmt.Errorf("unknown operation %q", op.Op)
}

func decodeAny(raw []byte) (any, error) {
	m, err := decodeMap([]byte(`{"v":` + string(raw) + `}`))
	if err != nil {
		return nil, err
	}
	return m["v"], nil
}

// normNumbers makes json.Number values comparable by value.
func normNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		f, _ := t.Float64()
		return f
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = normNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = normNumbers(e)
		}
		return out
	}
	return v
}

// pointer splits an RFC 6901 JSON pointer into its unescaped tokens.
func pointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("path %q does not start with /", p)
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		toks[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(t)
	}
	return toks, nil
}

func index(tok string, n int, appending bool) (int, error) {
	if appending && tok == "-" {
		return n, nil
	}
	i, err := strconv.Atoi(tok)
	max := n - 1
	if appending {
		max = n
	}
	if err != nil || i < 0 || i > max || (len(tok) > 1 && tok[0] == '0') {
		return 0, fmt.Errorf("index %q out of range", tok)
	}
	return i, nil
}

func getAt(doc any, path string) (any, error) {
	toks, err := pointer(path)
	if err != nil {
		return nil, err
	}
	cur := doc
	for _, t := range toks {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[t]
			if !ok {
				return nil, fmt.Errorf("missing key %q", t)
			}
			cur = v
		case []any:
			i, err := index(t, len(c), false)
			if err != nil {
				return nil, err
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("%q is not inside an object or array", t)
		}
	}
	return cur, nil
}

// setAt sets (insert: adds, inserting into arrays) the value at path and
// returns the new document.
func setAt(doc any, path string, v any, insert bool) (any, error) {
	toks, err := pointer(path)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return v, nil
	}
	parentPath := strings.Join(escapeAll(toks[:len(toks)-1]), "/")
	if parentPath != "" || len(toks) > 1 {
		parentPath = "/" + parentPath
	}
	parent, err := getAt(doc, parentPath)
	if err != nil {
		return nil, err
	}
	last := toks[len(toks)-1]
	switch c := parent.(type) {
	case map[string]any:
		c[last] = v
		return doc, nil
	case []any:
		i, err := index(last, len(c), insert)
		if err != nil {
			return nil, err
		}
		var nl []any
		if insert {
			nl = append(append(append([]any{}, c[:i]...), v), c[i:]...)
		} else {
			nl = append([]any{}, c...)
			nl[i] = v
		}
		return setAt(doc, parentPath, nl, false)
	}
	return nil, fmt.Errorf("the parent of %q is not an object or array", path)
}

func removeAt(doc any, path string) (any, error) {
	toks, err := pointer(path)
	if err != nil || len(toks) == 0 {
		return nil, fmt.Errorf("cannot remove %q", path)
	}
	parentPath := ""
	if len(toks) > 1 {
		parentPath = "/" + strings.Join(escapeAll(toks[:len(toks)-1]), "/")
	}
	parent, err := getAt(doc, parentPath)
	if err != nil {
		return nil, err
	}
	last := toks[len(toks)-1]
	switch c := parent.(type) {
	case map[string]any:
		if _, ok := c[last]; !ok {
			return nil, fmt.Errorf("missing key %q", last)
		}
		delete(c, last)
		return doc, nil
	case []any:
		i, err := index(last, len(c), false)
		if err != nil {
			return nil, err
		}
		nl := append(append([]any{}, c[:i]...), c[i+1:]...)
		return setAt(doc, parentPath, nl, false)
	}
	return nil, fmt.Errorf("the parent of %q is not an object or array", path)
}

func escapeAll(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = strings.NewReplacer("~", "~0", "/", "~1").Replace(t)
	}
	return out
}
