package manifest

import (
	"strings"
	"testing"
)

func TestTypeErrorPathHasIndexes(t *testing.T) {
	const head = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - {name: a, image: i}\n  - name: b\n    image: i\n"
	cases := map[string]string{
		"    livenessProbe: x\n":                                "spec.containers[1].livenessProbe: Invalid value: string: expected v1.Probe",
		"    ports: [{containerPort: 1}, {containerPort: x}]\n": "spec.containers[1].ports[1].containerPort: Invalid value: string",
		"    env: {a: 1}\n":                                     "spec.containers[1].env: Invalid value: object",
		"    livenessProbe: {httpGet: {port: true}}\n":          "spec.containers[1].livenessProbe.httpGet.port: Invalid value: bool",
		"    command: [a, [b]]\n":                               "spec.containers[1].command[1]: Invalid value: array",
	}
	for tail, want := range cases {
		got := decodeErrs(t, head+tail, Options{})
		if len(got) != 1 || !strings.HasPrefix(got[0], "pods/web.yaml: default/web: "+want) {
			t.Errorf("%q: got %q, want %q", tail, got, want)
		}
	}
	got := decodeErrs(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  nodeSelector: {a: 1}\n  containers: [{name: a, image: i}]\n", Options{})
	if len(got) != 1 || !strings.HasPrefix(got[0], "pods/web.yaml: default/web: spec.nodeSelector[a]: Invalid value: number: expected string") {
		t.Errorf("map value: %q", got)
	}
}
