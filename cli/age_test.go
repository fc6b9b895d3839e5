package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/internal/testutil"
)

// A node with no creation time, and a pod known only by its status, show
// AGE <unknown>, as kubectl does, not the age of the year 1.
func TestUnknownAgeIsShownAsUnknown(t *testing.T) {
	e := testutil.StartEtcd(t)
	ep := []string{"--etcd-endpoints", e.ClientURL}
	node, _ := json.Marshal(v1.Node{Status: v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}})
	e.Put("/registry/nodes/n1", string(node))
	status, _ := json.Marshal(v1.PodStatus{Phase: v1.PodRunning})
	e.Put("/registry/hosts/n1/status/default/nostart", string(status))

	years := regexp.MustCompile(`\d{4,}d|\d+y`)
	out, errOut, err := execute(getCmd(), append([]string{"nodes"}, ep...)...)
	if err != nil || !strings.Contains(out, "<unknown>") || years.MatchString(out) {
		t.Fatalf("get nodes: %v %q\n%s", err, errOut, out)
	}
	out, errOut, err = execute(getCmd(), append([]string{"pods", "--all-nodes"}, ep...)...)
	if err != nil || !strings.Contains(out, "nostart") || !strings.Contains(out, "<unknown>") || years.MatchString(out) {
		t.Fatalf("get pods --all-nodes: %v %q\n%s", err, errOut, out)
	}
}
