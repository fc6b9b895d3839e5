package podconfig

import "strings"

// expand replaces $(NAME) in s by mapping(NAME), as Kubernetes expands env
// values, command, args and subPathExpr (its forked
// third_party/forked/golang/expansion): "$$" is a literal "$", and an
// unterminated "$(" or a "$" before any other character stays as it is.
// mapping decides what an unknown name becomes (the kubelet: "$(NAME)").
func expand(s string, mapping func(string) string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	checkpoint := 0
	for cursor := 0; cursor < len(s); cursor++ {
		if s[cursor] != '$' || cursor+1 >= len(s) {
			continue
		}
		b.WriteString(s[checkpoint:cursor])
		read, isVar, advance := readVariable(s[cursor+1:])
		if isVar {
			b.WriteString(mapping(read))
		} else {
			b.WriteString(read)
		}
		cursor += advance
		checkpoint = cursor + 1
	}
	return b.String() + s[checkpoint:]
}

// readVariable reads what follows a '$': the name of a $(NAME) reference,
// or the text to keep, and how many bytes it consumed.
func readVariable(s string) (string, bool, int) {
	switch s[0] {
	case '$':
		return "$", false, 1
	case '(':
		if end := strings.IndexByte(s, ')'); end > 0 {
			return s[1:end], true, end + 1
		}
		return "$(", false, 1
	}
	return "$" + s[:1], false, 1
}

// mappingFor looks names up in vars; an unknown name stays "$(NAME)".
func mappingFor(vars map[string]string) func(string) string {
	return func(name string) string {
		if v, ok := vars[name]; ok {
			return v
		}
		return "$(" + name + ")"
	}
}
