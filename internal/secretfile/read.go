// Package secretfile reads and writes the secret files of the agent and
// its client: token files (one token a line) and password files, refused
// when group or others may read or write them, and files written with
// mode 0600 through no symlink another user planted (a kubeconfig with a
// token).
package secretfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxBytes caps a token or password file.
const MaxBytes = 64 << 10

// Read reads a secret file named by configuration key (or flag) key.
// It refuses a file that group or others may read or write (a mode with
// any of 0o077: a token anyone could read, or replace with their own), or
// larger than MaxBytes, naming key, path and mode.
func Read(key, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %s is not a regular file", key, path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s: %s has mode %04o; it must not be readable or writable by group or others (chmod 600)", key, path, perm)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("%s: %s is larger than %d bytes", key, path, MaxBytes)
	}
	return b, nil
}

// Tokens reads one token per non-empty line of the file path, named
// by configuration key key (server.token_file, sources.push.token_file),
// with Read's checks; a file without a token is an error.
func Tokens(key, path string) ([]string, error) {
	b, err := Read(key, path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return nil, errors.New(key + ": no token in file")
	}
	return out, nil
}
