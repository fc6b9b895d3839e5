package podconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// fileKeyValue reads the key of fileKeyRef r from its file in the pod's
// disk emptyDir, as the kubelet does when it creates the container. ok is
// false when an optional file or key is missing; a missing non-optional
// one is an error, and the container waits (CreateContainerConfigError)
// until a later try finds it.
func (er *envResolver) fileKeyValue(pod *v1.Pod, r *v1.FileKeySelector) (val string, ok bool, err error) {
	optional := r.Optional != nil && *r.Optional
	data, err := er.paths.ReadVolumeFile(string(pod.UID), r.VolumeName, r.Path)
	if errors.Is(err, fs.ErrNotExist) && optional {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("env file %s of volume %q: %w", r.Path, r.VolumeName, err)
	}
	val, found, err := envFileValue(data, r.Key)
	switch {
	case err != nil:
		return "", false, fmt.Errorf("env file %s of volume %q: %w", r.Path, r.VolumeName, err)
	case !found && optional:
		return "", false, nil
	case !found:
		return "", false, fmt.Errorf("couldn't find key %s in env file %s of volume %q", r.Key, r.Path, r.VolumeName)
	}
	return val, true, nil
}

// envFileValue returns the value of key in an env file of the kubelet's
// format: VAR='value' lines, the value literal between single quotes
// (newlines included), an optional '#' comment after it; blank lines and
// '#' lines skipped. "VAR= ..." assigns the empty string. The first
// assignment of key wins and nothing after it is read; a malformed line
// before it is an error naming the line.
func envFileValue(data []byte, key string) (val string, found bool, err error) {
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		n := i + 1
		line := strings.TrimLeft(strings.TrimSuffix(lines[i], "\r"), " \t")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, ok := strings.Cut(line, "=")
		switch {
		case !ok:
			return "", false, fmt.Errorf("invalid env file format at line %d: missing '='", n)
		case strings.TrimRight(name, " \t") == "":
			return "", false, fmt.Errorf("invalid env file format at line %d: empty variable name", n)
		case strings.TrimRight(name, " \t") != name:
			return "", false, fmt.Errorf("invalid env file format at line %d: whitespace before '=' is not allowed", n)
		case rest != "" && (rest[0] == ' ' || rest[0] == '\t'):
			if name == key {
				return "", true, nil
			}
			continue
		case !strings.HasPrefix(rest, "'"):
			return "", false, fmt.Errorf("invalid env file format at line %d: value must be enclosed in single quotes", n)
		}
		var value strings.Builder
		rest = rest[1:]
		for {
			end := strings.IndexByte(rest, '\'')
			if end >= 0 {
				value.WriteString(rest[:end])
				if after := strings.TrimLeft(rest[end+1:], " \t"); after != "" && !strings.HasPrefix(after, "#") {
					return "", false, fmt.Errorf("invalid env file format at line %d: unexpected content after closing quote", i+1)
				}
				break
			}
			value.WriteString(rest)
			value.WriteByte('\n')
			if i++; i >= len(lines) {
				return "", false, fmt.Errorf("invalid env file format starting at line %d: unclosed single quote", n)
			}
			rest = strings.TrimSuffix(lines[i], "\r")
		}
		if name == key {
			return value.String(), true, nil
		}
	}
	return "", false, nil
}
