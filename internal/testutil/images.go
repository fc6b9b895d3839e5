package testutil

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
)

// ImageBuilder builds a FROM scratch image holding one file (runtime.Docker
// and runtime/fake satisfy it).
type ImageBuilder interface {
	BuildImage(ctx context.Context, tag, binary, path string, entrypoint []string) error
}

// UniqueImage builds tag through b holding size random bytes at /payload,
// so that its ID is its own: no other image, of this run or another, shares
// it (an image built from a shared binary would be the builder's cached one,
// tags of other tests included). The image is never meant to run.
func UniqueImage(tb testing.TB, b ImageBuilder, tag string, size int) {
	tb.Helper()
	data := make([]byte, size)
	if _, err := rand.Read(data); err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "payload")
	if err := os.WriteFile(path, data, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := b.BuildImage(tb.Context(), tag, path, "/payload", []string{"/payload"}); err != nil {
		tb.Fatalf("build %s: %v", tag, err)
	}
}
