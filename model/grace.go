package model

import "time"

// DefaultGracePeriodSeconds is the termination grace period of a pod that
// sets none (the API server's default).
const DefaultGracePeriodSeconds int64 = 30

// MinGracePeriodSeconds is the least time a stop gives a container after
// its preStop hook, whatever the pod asks (the kubelet's
// minimumGracePeriodInSeconds); a period of 0 gets this too.
const MinGracePeriodSeconds int64 = 2

// DefaultGracePeriod and MinGracePeriod are the two constants as durations.
const (
	DefaultGracePeriod = time.Duration(DefaultGracePeriodSeconds) * time.Second
	MinGracePeriod     = time.Duration(MinGracePeriodSeconds) * time.Second
)
