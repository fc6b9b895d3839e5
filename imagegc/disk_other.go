//go:build !linux

package imagegc

import (
	"context"
	"errors"
)

var errUnsupported = errors.New("the engine's disk is read on Linux only")

// Statfs is the DiskUsage of the filesystem holding path (Linux only).
func Statfs(path string) DiskUsage {
	return func(ctx context.Context) (Usage, error) { return Usage{}, errUnsupported }
}

// EngineDir finds the engine's root dir (Linux only).
func EngineDir(rootDir string) (string, error) { return "", errUnsupported }
