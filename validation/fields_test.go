package validation

import (
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/berth-dev/berth/internal/jsonfield"
)

// TestFieldTableCoversTheAPI walks the pinned core/v1 types from PodSpec:
// every field of a type reached through mapped or defaulted fields (or
// listed in podFields) must be classed, and every entry must name a field
// that exists, so an API upgrade cannot add a silently ignored field.
func TestFieldTableCoversTheAPI(t *testing.T) {
	for _, problem := range fieldTableProblems(podFields, reflect.TypeFor[v1.PodSpec]()) {
		t.Error(problem)
	}
}

// TestObjectFieldTableCoversTheAPI does the same for the objects pods use.
func TestObjectFieldTableCoversTheAPI(t *testing.T) {
	roots := []reflect.Type{reflect.TypeFor[v1.ConfigMap](), reflect.TypeFor[v1.Secret](), reflect.TypeFor[v1.PersistentVolumeClaim]()}
	for _, problem := range fieldTableProblems(objectFields, roots...) {
		t.Error(problem)
	}
}

// TestFieldTableCheckFails proves the check above catches a missing entry
// and a stale one.
func TestFieldTableCheckFails(t *testing.T) {
	table := map[reflect.Type]map[string]fieldRule{}
	for rt, rules := range podFields {
		cp := map[string]fieldRule{}
		for k, v := range rules {
			cp[k] = v
		}
		table[rt] = cp
	}
	delete(table[reflect.TypeFor[v1.Container]()], "stdin")
	table[reflect.TypeFor[v1.PodSpec]()]["gone"] = m("x")
	got := strings.Join(fieldTableProblems(table, reflect.TypeFor[v1.PodSpec]()), "\n")
	for _, want := range []string{"Container.stdin (at spec.initContainers): field is in no class", "PodSpec.gone: classed but not in the API"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q lack %q", got, want)
		}
	}
}

func fieldTableProblems(table map[reflect.Type]map[string]fieldRule, roots ...reflect.Type) []string {
	var problems []string
	seen := map[reflect.Type]bool{}
	var walk func(rt reflect.Type, path string)
	walk = func(rt reflect.Type, path string) {
		rt = jsonfield.Elem(rt)
		if rt.Kind() != reflect.Struct || rt.PkgPath() != "k8s.io/api/core/v1" || seen[rt] {
			return
		}
		seen[rt] = true
		rules, ok := table[rt]
		if !ok {
			problems = append(problems, rt.Name()+" (at "+path+"): type is in no class")
			return
		}
		names := map[string]bool{}
		for i := range rt.NumField() {
			f := rt.Field(i)
			name, inline := jsonfield.Name(f)
			if inline {
				walk(f.Type, path)
				continue
			}
			names[name] = true
			rule, ok := rules[name]
			if !ok {
				problems = append(problems, rt.Name()+"."+name+" (at "+path+"): field is in no class")
				continue
			}
			if _, listed := table[jsonfield.Elem(f.Type)]; listed || rule.class == mapped || rule.class == defaulted {
				walk(f.Type, path+"."+name)
			}
		}
		for name, rule := range rules {
			if !names[name] {
				problems = append(problems, rt.Name()+"."+name+": classed but not in the API")
			}
			if rule.class == 0 || rule.what == "" {
				problems = append(problems, rt.Name()+"."+name+": no class or no description")
			}
		}
	}
	for _, root := range roots {
		name := root.Name()
		if root == reflect.TypeFor[v1.PodSpec]() {
			name = "spec"
		}
		walk(root, name)
	}
	for rt := range table {
		if !seen[rt] {
			problems = append(problems, rt.Name()+": in the table but not reachable from its roots")
		}
	}
	return problems
}

func TestClassedFields(t *testing.T) {
	spec := &v1.PodSpec{
		RuntimeClassName: ptr.To("gvisor"),
		Tolerations:      []v1.Toleration{{Key: "k"}},
		ReadinessGates:   []v1.PodReadinessGate{},
		Containers: []v1.Container{{Name: "a"}, {Name: "b", Stdin: true,
			LivenessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: 1}}, TerminationGracePeriodSeconds: ptr.To[int64](1)},
			Env:           []v1.EnvVar{{Name: "X", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{Key: "k"}}}}}},
		Volumes: []v1.Volume{{Name: "c", VolumeSource: v1.VolumeSource{NFS: &v1.NFSVolumeSource{}}}},
	}
	var refusedPaths, ignored []string
	for _, f := range classedFields(spec) {
		if f.rule.class == refused {
			refusedPaths = append(refusedPaths, f.path.String())
		} else {
			ignored = append(ignored, f.path.String())
		}
	}
	want := "spec.volumes[0].nfs spec.containers[1].livenessProbe.terminationGracePeriodSeconds spec.runtimeClassName"
	if got := strings.Join(refusedPaths, " "); got != want {
		t.Errorf("refused %s\nwant    %s", got, want)
	}
	if got := strings.Join(ignored, " "); got != "spec.tolerations" {
		t.Errorf("not applicable %s", got)
	}
}
