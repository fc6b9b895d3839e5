package model

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// PodSecurityLevel is a Pod Security Standards profile, named as Kubernetes
// Pod Security Admission names it.
type PodSecurityLevel string

const (
	// LevelPrivileged allows everything: the trusted file source.
	LevelPrivileged PodSecurityLevel = "privileged"
	// LevelBaseline forbids the known privilege escalations (the default of
	// the network sources).
	LevelBaseline PodSecurityLevel = "baseline"
	// LevelRestricted adds the hardening of the restricted profile.
	LevelRestricted PodSecurityLevel = "restricted"
)

// ParsePodSecurityLevel accepts privileged, baseline and restricted.
func ParsePodSecurityLevel(s string) (PodSecurityLevel, error) {
	switch l := PodSecurityLevel(strings.ToLower(strings.TrimSpace(s))); l {
	case LevelPrivileged, LevelBaseline, LevelRestricted:
		return l, nil
	}
	return "", fmt.Errorf("%q is not one of privileged, baseline, restricted", s)
}

// PortRange is an inclusive range of port numbers.
type PortRange struct{ Min, Max int32 }

// PortRanges is a set of ports; nil holds none.
type PortRanges []PortRange

// DefaultHostPorts are the host ports a baseline source may claim: the
// unprivileged ones.
var DefaultHostPorts = PortRanges{{1024, 65535}}

// Contains reports whether port is in one of the ranges.
func (rs PortRanges) Contains(port int32) bool {
	for _, r := range rs {
		if port >= r.Min && port <= r.Max {
			return true
		}
	}
	return false
}

func (rs PortRanges) String() string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		if r.Min == r.Max {
			parts[i] = strconv.Itoa(int(r.Min))
		} else {
			parts[i] = fmt.Sprintf("%d-%d", r.Min, r.Max)
		}
	}
	return strings.Join(parts, ",")
}

// ParsePortRanges reads "1024-65535" or "80,443,8000-8999"; each port is
// 1-65535 and each range ascending. An empty string is no port at all.
func ParsePortRanges(s string) (PortRanges, error) {
	rs := PortRanges{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := strconv.Atoi(strings.TrimSpace(hi))
		if err1 != nil || err2 != nil || a < 1 || b > 65535 || a > b {
			return nil, fmt.Errorf("%q is not a port or an ascending range of ports 1-65535", part)
		}
		rs = append(rs, PortRange{int32(a), int32(b)})
	}
	return rs, nil
}

// uuidPattern is a UUID in any case.
var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// ValidPodUID reports whether uid may name a pod: a UUID or a DNS-1123
// label, so always one path element (it names root_dir/pods/<uid>).
// Validation refuses other UIDs; podfs refuses them again as paths.
func ValidPodUID(uid string) bool {
	return uuidPattern.MatchString(uid) || len(validation.IsDNS1123Label(uid)) == 0
}
