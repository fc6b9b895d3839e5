package manifest

import (
	"crypto/sha1"
	"encoding/base32"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

var (
	legacyNameEncoding = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv")
	notDNSLabelChars   = regexp.MustCompile("[^a-z0-9]+")
)

// LegacyPodName is the name the seed kubelet's file source (2014,
// pkg/kubelet/config/file.go, simpleSubdomainSafeHash) gave a
// ContainerManifest without an id read from path: the file's base name in
// lower case with every character but a-z and 0-9 dropped, cut to 15
// characters, then the first 30 characters of the SHA-1 of path in base32
// (alphabet 0-9a-v). The name is a valid DNS label of at most 45
// characters and depends on the whole path as the source was given it:
// /etc/berth/pods/fluentd-es.manifest is
// "fluentdesmanife" followed by 30 hash characters.
func LegacyPodName(path string) string {
	base := notDNSLabelChars.ReplaceAllString(strings.ToLower(filepath.Base(path)), "")
	sum := sha1.Sum([]byte(path))
	return fmt.Sprintf("%.15s%.30s", base, legacyNameEncoding.EncodeToString(sum[:]))
}
