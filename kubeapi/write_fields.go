package kubeapi

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	sigsjson "sigs.k8s.io/json"
)

// Field validation modes of the fieldValidation parameter.
const (
	fieldStrict = "Strict" // unknown or duplicate fields: 400
	fieldWarn   = "Warn"   // a Warning header each, the fields dropped
	fieldIgnore = "Ignore" // dropped silently
)

// fieldValidation reads the request's fieldValidation parameter; absent is
// Warn, the apiserver's default (kubectl sends Strict).
func fieldValidation(r *http.Request) (string, error) {
	switch v := r.URL.Query().Get("fieldValidation"); v {
	case "":
		return fieldWarn, nil
	case fieldStrict, fieldWarn, fieldIgnore:
		return v, nil
	default:
		return "", badRequest(fmt.Sprintf("fieldValidation parameter unsupported value: %q: supported values: Ignore, Warn, Strict", v))
	}
}

// checkFields applies mode to the unknown and duplicate fields of j, the
// JSON of m, an object of kind k: Strict refuses them with a 400 naming
// every one; Warn adds a Warning header for each; both Warn and Ignore
// drop the unknown ones from m (a duplicate's last value is already m's).
func checkFields(w http.ResponseWriter, mode string, k writeKind, j []byte, m map[string]any) error {
	strict, _ := sigsjson.UnmarshalStrict(j, k.zero())
	if len(strict) == 0 {
		return nil
	}
	msgs := make([]string, len(strict))
	for i, e := range strict {
		msgs[i] = e.Error()
	}
	switch mode {
	case fieldStrict:
		return badRequest(fmt.Sprintf("%s in version \"v1\" cannot be handled as a %s: strict decoding error: %s",
			k.kind, k.kind, strings.Join(msgs, ", ")))
	case fieldWarn:
		for _, msg := range msgs {
			w.Header().Add("Warning", quoteWarning(msg))
		}
	}
	for _, e := range strict {
		if fe, ok := e.(sigsjson.FieldError); ok && strings.HasPrefix(e.Error(), "unknown field") {
			removePath(m, fe.FieldPath())
		}
	}
	return nil
}

var pathStep = regexp.MustCompile(`([^.\[\]]+)|\[(\d+)\]`)

// removePath deletes the field at path ("spec.containers[0].foo") from v.
func removePath(v any, path string) {
	steps := pathStep.FindAllStringSubmatch(path, -1)
	for i, s := range steps {
		last := i == len(steps)-1
		switch {
		case s[1] != "":
			m, ok := v.(map[string]any)
			if !ok {
				return
			}
			if last {
				delete(m, s[1])
				return
			}
			v = m[s[1]]
		default:
			l, ok := v.([]any)
			n, err := strconv.Atoi(s[2])
			if !ok || err != nil || n >= len(l) || last {
				return
			}
			v = l[n]
		}
	}
}
