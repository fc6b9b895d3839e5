package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
)

// document is one YAML document of an origin, or its whole JSON input.
type document struct {
	data []byte
	line int // the line of the origin data starts on, from 1
}

var utf8BOM = []byte("\xef\xbb\xbf")

// splitDocuments returns the documents of data: JSON input is one document;
// YAML is split at lines starting with "---" (followed by nothing but
// spaces or a comment; other text there is an error, as in
// k8s.io/apimachinery's YAMLReader), documents with no line left out. It
// stops with errTooManyObjects after max documents.
func splitDocuments(data []byte, max int) ([]document, error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, nil
	}
	if (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
		return []document{{data: trimmed, line: 1}}, nil
	}
	var docs []document
	var cur []byte
	start := 0
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line = data[:i+1]
		}
		data = data[len(line):]
		if !bytes.HasPrefix(line, []byte("---")) {
			if len(cur) == 0 {
				start = n
			}
			cur = append(cur, line...)
			continue
		}
		if rest := bytes.TrimSpace(line[3:]); len(rest) > 0 && rest[0] != '#' {
			return docs, fmt.Errorf("invalid YAML document separator at line %d: %q", n, bytes.TrimSpace(line))
		}
		if len(cur) == 0 {
			continue
		}
		if len(docs) >= max {
			return docs, errTooManyObjects
		}
		docs = append(docs, document{data: cur, line: start})
		cur = nil
	}
	if len(cur) > 0 {
		if len(docs) >= max {
			return docs, errTooManyObjects
		}
		docs = append(docs, document{data: cur, line: start})
	}
	return docs, nil
}

var yamlLine = regexp.MustCompile(`\bline (\d+)\b`)

// shiftLines adds offset to every "line N" of a YAML parser's message about
// a document, so that N counts from the top of the origin.
func shiftLines(msg string, offset int) string {
	if offset == 0 {
		return msg
	}
	return yamlLine.ReplaceAllStringFunc(msg, func(m string) string {
		n, err := strconv.Atoi(m[len("line "):])
		if err != nil {
			return m
		}
		return "line " + strconv.Itoa(n+offset)
	})
}
