package manifest

import (
	"strings"

	"github.com/berth-dev/berth/validation"
)

// WarningLine is the one warning line of a loaded pod, "" when it has no
// validation.Warnings: "origin: ns/name: ignored without a cluster: path
// (reason), ...; not enforced: path (reason), ...", either part left out
// when empty.
func WarningLine(d Desired) string {
	var cluster, unenforced []string
	for _, w := range validation.Warnings(d.Pod) {
		item := w.Path + " (" + w.Reason + ")"
		if w.NotEnforced {
			unenforced = append(unenforced, item)
		} else {
			cluster = append(cluster, item)
		}
	}
	var parts []string
	if len(cluster) > 0 {
		parts = append(parts, "ignored without a cluster: "+strings.Join(cluster, ", "))
	}
	if len(unenforced) > 0 {
		parts = append(parts, "not enforced: "+strings.Join(unenforced, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return d.Origin + ": " + PodKey(d.Pod.Namespace, d.Pod.Name) + ": " + strings.Join(parts, "; ")
}
