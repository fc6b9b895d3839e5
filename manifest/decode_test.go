package manifest

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-dev/berth/model"
)

const podYAML = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: web
    image: berth/testapp:1
    args: [serve]
    ports:
    - containerPort: 8080
      hostPort: 18080
`

// decodeOK decodes data and fails the test on any error.
func decodeOK(t *testing.T, data string, opts Options) []Desired {
	t.Helper()
	pods, errs := Decode("test", "pods/web.yaml", []byte(data), opts)
	for _, e := range errs {
		t.Errorf("unexpected error: %v", e)
	}
	return pods
}

// decodeErrs decodes data, expects no pods, and returns the error strings.
func decodeErrs(t *testing.T, data string, opts Options) []string {
	t.Helper()
	pods, errs := Decode("test", "pods/web.yaml", []byte(data), opts)
	if len(pods) != 0 {
		t.Errorf("got %d pods, want none", len(pods))
	}
	var s []string
	for _, e := range errs {
		s = append(s, e.Error())
	}
	return s
}

func keys(pods []Desired) []string {
	var k []string
	for _, d := range pods {
		k = append(k, d.Pod.Namespace+"/"+d.Pod.Name)
	}
	return k
}

func TestDecodeYAMLPod(t *testing.T) {
	pods := decodeOK(t, podYAML, Options{})
	if len(pods) != 1 {
		t.Fatalf("got %d pods", len(pods))
	}
	d := pods[0]
	if d.Origin != "pods/web.yaml" {
		t.Errorf("origin %q", d.Origin)
	}
	c := d.Pod.Spec.Containers[0]
	if d.Pod.Namespace != "default" || c.Image != "berth/testapp:1" || !reflect.DeepEqual(c.Args, []string{"serve"}) {
		t.Errorf("unexpected pod %+v", d.Pod)
	}
	if c.Ports[0].HostPort != 18080 || c.Ports[0].Protocol != v1.ProtocolTCP {
		t.Errorf("ports %+v", c.Ports)
	}
	if d.Pod.Kind != "Pod" || d.Pod.APIVersion != "v1" {
		t.Errorf("type meta %+v", d.Pod.TypeMeta)
	}
}

func TestDecodeJSONPod(t *testing.T) {
	data := "{\n\t\"apiVersion\": \"v1\", \"kind\": \"Pod\",\n\t\"metadata\": {\"name\": \"api\", \"namespace\": \"prod\"},\n" +
		"\t\"spec\": {\"containers\": [{\"name\": \"api\", \"image\": \"berth/testapp:1\"}]}\n}\n"
	pods := decodeOK(t, data, Options{})
	if got := keys(pods); !reflect.DeepEqual(got, []string{"prod/api"}) {
		t.Fatalf("keys %v", got)
	}
}

func TestDecodeMultiDocument(t *testing.T) {
	data := "---\n# leading comment\n" + podYAML + "---\n\n---\n" + strings.ReplaceAll(podYAML, "name: web", "name: api") + "...\n"
	data = strings.TrimSuffix(data, "...\n")
	pods := decodeOK(t, data, Options{})
	if got := keys(pods); !reflect.DeepEqual(got, []string{"default/web", "default/api"}) {
		t.Fatalf("keys %v", got)
	}
}

func TestDecodeEmpty(t *testing.T) {
	for _, data := range []string{"", "\n\n", "# only a comment\n", "---\n---\n", "null\n", "\xef\xbb\xbf"} {
		pods, errs := Decode("test", "x.yaml", []byte(data), Options{})
		if len(pods) != 0 || len(errs) != 0 {
			t.Errorf("%q: pods %v errs %v", data, pods, errs)
		}
	}
}

func TestDecodeLists(t *testing.T) {
	list := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: a}
  spec: {containers: [{name: c, image: busybox}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: b, namespace: other}
  spec: {containers: [{name: c, image: busybox}]}
`
	if got := keys(decodeOK(t, list, Options{})); !reflect.DeepEqual(got, []string{"default/a", "other/b"}) {
		t.Errorf("List keys %v", got)
	}
	podList := `{"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "1"}, "items": [
		{"metadata": {"name": "a"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}},
		{"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "b"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}]}`
	if got := keys(decodeOK(t, podList, Options{})); !reflect.DeepEqual(got, []string{"default/a", "default/b"}) {
		t.Errorf("PodList keys %v", got)
	}
	bad := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: pod
  metadata: {name: d}
- apiVersion: v1
  kind: Pod
  metadata: {name: ok}
  spec: {containers: [{name: c, image: busybox}]}
`
	pods, errs := Decode("test", "l.yaml", []byte(bad), Options{})
	if got := keys(pods); !reflect.DeepEqual(got, []string{"default/ok"}) {
		t.Errorf("keys %v", got)
	}
	if len(errs) != 1 || errs[0].PodKey != "" || errs[0].Field != "items[0].kind" || !strings.Contains(errs[0].Err, "Unsupported value") {
		t.Errorf("errs %v", errs)
	}
}

func TestDecodeKindAndVersionErrors(t *testing.T) {
	cases := map[string]string{
		"apiVersion: v1\nkind: Pdo\nmetadata: {name: d}\n": `x: kind: Unsupported value: "Pdo"`,
		"apiVersion: v2\nkind: Pod\nmetadata: {name: p}\n": `x: apiVersion: Unsupported value: "v2"`,
		"metadata: {name: p}\n":                            `x: kind: Required value`,
		"- 1\n":                                            `x: [0]: list item must be`,
		"just a string\n":                                  `x: manifest must be an object`,
		"a: [unclosed\n":                                   `x: yaml: line 1: did not find expected`,
		"a: 1\na: 2\n":                                     `x: yaml: unmarshal errors: line 2: key "a" already set in map`,
	}
	for data, want := range cases {
		pods, errs := Decode("test", "x", []byte(data), Options{})
		if len(pods) != 0 || len(errs) != 1 || errs[0].PodKey != "" || !strings.HasPrefix(errs[0].Error(), want) {
			t.Errorf("%q: got pods %v errs %v, want %q", data, pods, errs, want)
		}
	}
}

func TestDecodeStrictUnknownField(t *testing.T) {
	data := strings.Replace(podYAML, "    image: berth/testapp:1\n", "    image: berth/testapp:1\n    imagePullPolcy: Never\n", 1)
	got := decodeErrs(t, data, Options{})
	want := []string{`pods/web.yaml: default/web: spec.containers[0].imagePullPolcy: unknown field; did you mean "imagePullPolicy"?`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	data = strings.Replace(podYAML, "spec:\n", "spec:\n  restartPolice: Never\n", 1)
	if got := decodeErrs(t, data, Options{}); len(got) != 1 || !strings.Contains(got[0], "spec.restartPolice: unknown field") {
		t.Errorf("got %q", got)
	}
}

func TestDecodeTypeError(t *testing.T) {
	data := strings.Replace(podYAML, "containerPort: 8080", "containerPort: eighty", 1)
	got := decodeErrs(t, data, Options{})
	if len(got) != 1 || !strings.HasPrefix(got[0], "pods/web.yaml: default/web: spec.containers[0].ports[0].containerPort: Invalid value: string") {
		t.Errorf("got %q", got)
	}
}

func TestDecodeBadDocumentKeepsOthers(t *testing.T) {
	data := podYAML + "---\nkind: Pod\napiVersion: v1\nmetadata: [broken\n---\n" + strings.ReplaceAll(podYAML, "name: web", "name: api")
	pods, errs := Decode("test", "f.yaml", []byte(data), Options{})
	if got := keys(pods); !reflect.DeepEqual(got, []string{"default/web", "default/api"}) {
		t.Errorf("keys %v", got)
	}
	if len(errs) != 1 || errs[0].PodKey != "" || !strings.HasSuffix(errs[0].Err, "(document 2)") {
		t.Errorf("errs %v", errs)
	}
}

func TestDecodeDuplicateKey(t *testing.T) {
	data := podYAML + "---\n" + strings.Replace(podYAML, "image: berth/testapp:1", "image: other:2", 1)
	pods, errs := Decode("test", "pods/web.yaml", []byte(data), Options{})
	if len(pods) != 1 || pods[0].Pod.Spec.Containers[0].Image != "berth/testapp:1" {
		t.Errorf("pods %v", pods)
	}
	if len(errs) != 1 || errs[0].PodKey != "default/web" || errs[0].Field != "metadata.name" || !strings.HasPrefix(errs[0].Err, "Duplicate value") {
		t.Errorf("errs %v", errs)
	}
}

func TestDecodeErrorFormat(t *testing.T) {
	data := strings.Replace(podYAML, "    image: berth/testapp:1\n", "", 1)
	got := decodeErrs(t, data, Options{})
	want := []string{"pods/web.yaml: default/web: spec.containers[0].image: Required value"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// seedManifest is in the style of the 2014 kubelet's examples.
const seedManifest = `version: v1beta1
id: nginx
uuid: 2d3a7a8c-0000-4000-8000-000000000001
containers:
  - name: nginx
    image: dockerfile/nginx
    command: ["nginx", "-g", "daemon off;"]
    workingDir: /srv
    ports:
      - name: www
        containerPort: 80
        hostPort: 8080
        protocol: tcp
        hostIP: 127.0.0.1
    env:
      - name: MODE
        value: prod
      - key: OLD
        value: style
    memory: 134217728
    cpu: 500
    volumeMounts:
      - name: www-data
        path: /var/www/html
        readOnly: true
      - name: cache
        mountPath: /cache
    livenessProbe:
      type: http
      httpGet:
        path: /index.html
        port: "80"
        host: localhost
      initialDelaySeconds: 15
volumes:
  - name: www-data
    source:
      hostDir:
        path: /tmp/www
  - name: cache
    source:
      emptyDir: {}
  - name: nosource
restartPolicy:
  onFailure: {}
`

func TestDecodeLegacySeed(t *testing.T) {
	pods := decodeOK(t, seedManifest, Options{Level: model.LevelPrivileged})
	if len(pods) != 1 {
		t.Fatalf("got %d pods", len(pods))
	}
	p := pods[0].Pod
	if p.Name != "nginx" || p.Namespace != "default" || p.UID != "2d3a7a8c-0000-4000-8000-000000000001" {
		t.Errorf("meta %+v", p.ObjectMeta)
	}
	if p.Spec.RestartPolicy != v1.RestartPolicyOnFailure {
		t.Errorf("restartPolicy %q", p.Spec.RestartPolicy)
	}
	c := p.Spec.Containers[0]
	if len(c.Command) != 0 || !reflect.DeepEqual(c.Args, []string{"nginx", "-g", "daemon off;"}) || c.WorkingDir != "/srv" {
		t.Errorf("command %v args %v", c.Command, c.Args)
	}
	wantPort := v1.ContainerPort{Name: "www", ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolTCP, HostIP: "127.0.0.1"}
	if !reflect.DeepEqual(c.Ports, []v1.ContainerPort{wantPort}) {
		t.Errorf("ports %+v", c.Ports)
	}
	if !reflect.DeepEqual(c.Env, []v1.EnvVar{{Name: "MODE", Value: "prod"}, {Name: "OLD", Value: "style"}}) {
		t.Errorf("env %+v", c.Env)
	}
	if m := c.Resources.Limits[v1.ResourceMemory]; m.Cmp(resource.MustParse("128Mi")) != 0 {
		t.Errorf("memory %v", m.String())
	}
	if cpu := c.Resources.Limits[v1.ResourceCPU]; cpu.MilliValue() != 500 {
		t.Errorf("cpu %v", cpu.String())
	}
	wantMounts := []v1.VolumeMount{{Name: "www-data", MountPath: "/var/www/html", ReadOnly: true}, {Name: "cache", MountPath: "/cache"}}
	if !reflect.DeepEqual(c.VolumeMounts, wantMounts) {
		t.Errorf("mounts %+v", c.VolumeMounts)
	}
	vols := p.Spec.Volumes
	if vols[0].HostPath == nil || vols[0].HostPath.Path != "/tmp/www" || vols[1].EmptyDir == nil || vols[2].EmptyDir == nil {
		t.Errorf("volumes %+v", vols)
	}
	lp := c.LivenessProbe
	if lp == nil || lp.HTTPGet == nil || lp.HTTPGet.Path != "/index.html" || lp.HTTPGet.Port != intstr.FromInt32(80) ||
		lp.HTTPGet.Host != "localhost" || lp.InitialDelaySeconds != 15 || lp.PeriodSeconds != 10 {
		t.Errorf("liveness %+v", lp)
	}
	if c.ImagePullPolicy != v1.PullAlways {
		t.Errorf("pull policy %q", c.ImagePullPolicy)
	}

	errs := decodeErrs(t, seedManifest, Options{})
	want := []string{
		`pods/web.yaml: default/nginx: spec.volumes[0].hostPath: Forbidden: violates PodSecurity "baseline": hostPath volumes (must not use a hostPath volume)`,
		`pods/web.yaml: default/nginx: spec.containers[0].livenessProbe.httpGet.host: Forbidden: violates PodSecurity "baseline": probe or lifecycle host (must not set host "localhost": probes reach the pod's own IP)`,
	}
	if !slices.Equal(errs, want) {
		t.Errorf("without host access: %q", errs)
	}
}

func TestDecodeLegacyList(t *testing.T) {
	yamlList := `- version: v1beta1
  id: one
  containers: [{name: a, image: busybox}]
- version: v1beta1
  id: two
  containers: [{name: a, image: busybox}]
  restartPolicy: {never: {}}
`
	pods := decodeOK(t, yamlList, Options{})
	if got := keys(pods); !reflect.DeepEqual(got, []string{"default/one", "default/two"}) {
		t.Fatalf("keys %v", got)
	}
	if pods[0].Pod.Spec.RestartPolicy != v1.RestartPolicyAlways || pods[1].Pod.Spec.RestartPolicy != v1.RestartPolicyNever {
		t.Errorf("restart policies")
	}
	jsonList := `[{"version": "v1beta1", "id": "j", "containers": [{"name": "a", "image": "busybox", "command": ["sleep", "1"]}]}]`
	if got := keys(decodeOK(t, jsonList, Options{})); !reflect.DeepEqual(got, []string{"default/j"}) {
		t.Errorf("json keys %v", got)
	}
}

func TestDecodeLegacyErrors(t *testing.T) {
	cases := map[string]string{
		"version: v1beta1\nid: x\ncontainers: [{name: a, image: b, memroy: 5}]\n":                              "x: default/x: containers[0].memroy: unknown field",
		"version: v1beta3\nid: x\ncontainers: [{name: a, image: b}]\n":                                         `x: default/x: version: Unsupported value: "v1beta3"`,
		"version: v1beta1\nid: x\ncontainers: [{name: a}]\n":                                                   "x: default/x: spec.containers[0].image: Required value",
		"version: v1beta1\ncontainers: [{name: a, image: b}]\n":                                                "x: id: Required value",
		"- version: v1beta1\n  containers: [{name: a, image: b}]\n":                                            "x: [0].id: Required value",
		"version: v1beta1\nid: x\ncontainers: [{name: a, image: b, livenessProbe: {type: grpc}}]\n":            `x: default/x: containers[0].livenessProbe.type: Unsupported value: "grpc"`,
		"version: v1beta1\nid: x\nrestartPolicy: {always: {}, never: {}}\ncontainers: [{name: a, image: b}]\n": "x: default/x: restartPolicy: Forbidden",
	}
	for data, want := range cases {
		pods, errs := Decode("test", "x", []byte(data), Options{})
		if len(pods) != 0 || len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), want) {
			t.Errorf("%q: got pods %v errs %v, want %q", data, pods, errs, want)
		}
	}
}

func TestDefaults(t *testing.T) {
	data := `apiVersion: v1
kind: Pod
metadata: {name: d}
spec:
  volumes:
  - name: h
    hostPath: {path: /tmp}
  - name: e
  initContainers:
  - name: init
    image: busybox@sha256:0000000000000000000000000000000000000000000000000000000000000000
  containers:
  - name: a
    image: registry:5000/app
    ports: [{containerPort: 80}]
    livenessProbe: {httpGet: {port: 80}}
    readinessProbe: {tcpSocket: {port: 80}, periodSeconds: 3}
    startupProbe: {exec: {command: [/bin/true]}}
  - name: b
    image: app:latest
  - name: c
    image: registry:5000/app:1.2
status:
  phase: Running
`
	pods := decodeOK(t, data, Options{Level: model.LevelPrivileged})
	if len(pods) != 1 {
		t.Fatal("no pod")
	}
	p := pods[0].Pod
	if p.Namespace != "default" || p.Spec.RestartPolicy != v1.RestartPolicyAlways || *p.Spec.TerminationGracePeriodSeconds != 30 {
		t.Errorf("pod defaults %+v", p.Spec)
	}
	if p.Status.Phase != "" {
		t.Errorf("status kept: %+v", p.Status)
	}
	if *p.Spec.Volumes[0].HostPath.Type != v1.HostPathUnset || p.Spec.Volumes[1].EmptyDir == nil {
		t.Errorf("volumes %+v", p.Spec.Volumes)
	}
	pulls := []v1.PullPolicy{p.Spec.InitContainers[0].ImagePullPolicy}
	for _, c := range p.Spec.Containers {
		pulls = append(pulls, c.ImagePullPolicy)
	}
	wantPulls := []v1.PullPolicy{v1.PullIfNotPresent, v1.PullAlways, v1.PullAlways, v1.PullIfNotPresent}
	if !reflect.DeepEqual(pulls, wantPulls) {
		t.Errorf("pull policies %v, want %v", pulls, wantPulls)
	}
	a := p.Spec.Containers[0]
	if a.Ports[0].Protocol != v1.ProtocolTCP {
		t.Errorf("protocol %q", a.Ports[0].Protocol)
	}
	for name, pr := range map[string]*v1.Probe{"liveness": a.LivenessProbe, "startup": a.StartupProbe} {
		if pr.PeriodSeconds != 10 || pr.TimeoutSeconds != 1 || pr.FailureThreshold != 3 || pr.SuccessThreshold != 1 {
			t.Errorf("%s probe defaults %+v", name, pr)
		}
	}
	if a.ReadinessProbe.PeriodSeconds != 3 || a.ReadinessProbe.TimeoutSeconds != 1 {
		t.Errorf("readiness %+v", a.ReadinessProbe)
	}
	if a.LivenessProbe.HTTPGet.Path != "/" || a.LivenessProbe.HTTPGet.Scheme != v1.URISchemeHTTP {
		t.Errorf("httpGet %+v", a.LivenessProbe.HTTPGet)
	}
}

func TestDefaultHostNetworkHostPort(t *testing.T) {
	data := strings.Replace(podYAML, "      hostPort: 18080\n", "", 1)
	data = strings.Replace(data, "spec:\n", "spec:\n  hostNetwork: true\n", 1)
	pods := decodeOK(t, data, Options{Level: model.LevelPrivileged})
	if len(pods) != 1 || pods[0].Pod.Spec.Containers[0].Ports[0].HostPort != 8080 {
		t.Errorf("hostPort not defaulted: %+v", pods)
	}
}

func TestDeterministicUID(t *testing.T) {
	uid := func(source, data string) string {
		pods, errs := Decode(source, "o", []byte(data), Options{})
		if len(pods) != 1 || len(errs) != 0 {
			t.Fatalf("pods %v errs %v", pods, errs)
		}
		return string(pods[0].Pod.UID)
	}
	first := uid("file", podYAML)
	if len(first) != 36 || strings.Count(first, "-") != 4 {
		t.Errorf("uid %q is not UUID-formatted", first)
	}
	if first != string(PodUID("file", "default", "web")) {
		t.Errorf("uid %q != PodUID", first)
	}
	edited := strings.Replace(podYAML, "berth/testapp:1", "berth/testapp:2", 1)
	if uid("file", edited) != first {
		t.Error("UID changed when the spec was edited")
	}
	if uid("http", podYAML) == first {
		t.Error("UID does not depend on the source")
	}
	if uid("file", strings.Replace(podYAML, "name: web\nspec", "name: web\n  namespace: other\nspec", 1)) == first {
		t.Error("UID does not depend on the namespace")
	}
	set := strings.Replace(podYAML, "name: web\nspec", "name: web\n  uid: given\nspec", 1)
	if uid("file", set) != "given" {
		t.Error("explicit UID not kept")
	}
}

func TestDefaultIdempotent(t *testing.T) {
	pods := decodeOK(t, seedManifest, Options{Level: model.LevelPrivileged})
	p := pods[0].Pod.DeepCopy()
	Default("test", p, false)
	if !reflect.DeepEqual(p, pods[0].Pod) {
		t.Error("Default changed a defaulted pod")
	}
}

func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../examples/pods/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pods, errs := Decode("file", f, data, Options{})
		if len(errs) != 0 || len(pods) != 1 {
			t.Errorf("%s: pods %d errs %v", f, len(pods), errs)
			continue
		}
		p := pods[0].Pod
		switch filepath.Base(f) {
		case "web.yaml":
			if p.Name != "web" || len(p.Spec.Containers) != 2 || p.Spec.Containers[1].Name != "sidecar" ||
				p.Spec.Containers[0].Ports[0].HostPort != 18080 {
				t.Errorf("web: %+v", p.Spec)
			}
		case "legacy.yaml":
			if p.Name != "legacy-hello" || p.Spec.Containers[0].Image != "berth/testapp:1" || p.Spec.Containers[0].Ports[0].HostPort != 0 {
				t.Errorf("legacy: %+v", p.Spec)
			}
		}
	}
}
