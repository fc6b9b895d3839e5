package manifest

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// A pod with an unknown field is still validated: every error is reported,
// each once.
func TestDecodeReportsEveryErrorOfAPod(t *testing.T) {
	data := `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: a
    imagePullPolcy: Always
    resources: {limits: {memory: 12xx, cpu: "1"}}
    ports: [{containerPort: eighty}, {containerPort: 99999}]
  restartPolicy: Sometimes
`
	got := decodeErrs(t, data, Options{})
	want := []string{
		`pods/web.yaml: default/web: spec.containers[0].ports[0].containerPort: Invalid value: string: expected int32`,
		`pods/web.yaml: default/web: spec.containers[0].resources.limits[memory]: Invalid value: "12xx": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
		`pods/web.yaml: default/web: spec.containers[0].imagePullPolcy: unknown field; did you mean "imagePullPolicy"?`,
	}
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Fatalf("got\n%s\nwant first\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	rest := strings.Join(got[len(want):], "\n")
	for _, sub := range []string{
		"spec.restartPolicy: Unsupported value: \"Sometimes\"",
		"spec.containers[0].image: Required value",
		"spec.containers[0].ports[1].containerPort: Invalid value: 99999",
	} {
		if !strings.Contains(rest, sub) {
			t.Errorf("validation errors lack %q:\n%s", sub, rest)
		}
	}
	for _, e := range got[len(want):] {
		if strings.Contains(e, "ports[0]") || strings.Contains(e, "limits[memory]") {
			t.Errorf("a reported value is reported again: %s", e)
		}
	}
}

func TestDecodeSuggestsFieldNames(t *testing.T) {
	cases := map[string]string{
		"    imagePullPolcy: Always\n":                               `spec.containers[0].imagePullPolcy: unknown field; did you mean "imagePullPolicy"?`,
		"    ImagePullPolicy: Always\n":                              `spec.containers[0].ImagePullPolicy: unknown field; did you mean "imagePullPolicy"?`,
		"    imagee: x\n":                                            `spec.containers[0].imagee: unknown field; did you mean "image"?`,
		"    livenessProbe: {httpGet: {port: 1}, periodSecond: 3}\n": `spec.containers[0].livenessProbe.periodSecond: unknown field; did you mean "periodSeconds"?`,
		"    livenessProbe: {htpGet: {port: 1}}\n":                   `spec.containers[0].livenessProbe.htpGet: unknown field; did you mean "httpGet"?`,
		"    flavour: vanilla\n":                                     `spec.containers[0].flavour: unknown field`,
	}
	for tail, want := range cases {
		data := "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: a\n    image: i\n" + tail
		got := decodeErrs(t, data, Options{})
		if !slices.Contains(got, "pods/web.yaml: default/web: "+want) {
			t.Errorf("%q: got %q, want %q", tail, got, want)
		}
	}
	legacy := "version: v1beta1\nid: x\ncontainers: [{name: a, image: b, volumeMount: []}]\n"
	if got := decodeErrs(t, legacy, Options{}); !slices.Equal(got, []string{`pods/web.yaml: default/x: containers[0].volumeMount: unknown field; did you mean "volumeMounts"?`}) {
		t.Errorf("legacy: %q", got)
	}
}

// Line numbers of YAML errors count from the top of the origin, not from
// the start of the document.
func TestDecodeYAMLLinesFromTop(t *testing.T) {
	data := "# pods\n" + podYAML + "---\n\n# second\napiVersion: v1\nkind: Pod\nmetadata:\n  name: b\n   bad: indent\n"
	_, errs := Decode("test", "f.yaml", []byte(data), Options{})
	if len(errs) != 1 || !strings.Contains(errs[0].Err, "line 21:") || !strings.HasSuffix(errs[0].Err, "(document 2)") {
		t.Errorf("errs %v", errs)
	}
	if lines := strings.Split(data, "\n"); lines[20] != "   bad: indent" {
		t.Fatalf("line 21 is %q", lines[20])
	}
	_, errs = Decode("test", "f.yaml", []byte("a: 1\na: 2\n---\nb: 1\nb: 2\n"), Options{})
	if len(errs) != 2 || !strings.Contains(errs[0].Err, "line 2:") || !strings.Contains(errs[1].Err, "line 5:") {
		t.Errorf("duplicate keys: %v", errs)
	}
}

func TestSplitDocuments(t *testing.T) {
	docs, err := splitDocuments([]byte("---\na: 1\n--- # two\n---\n\nb: 2\n...\n---"), 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var lines []int
	for _, d := range docs {
		got, lines = append(got, string(d.data)), append(lines, d.line)
	}
	if !reflect.DeepEqual(got, []string{"a: 1\n", "\nb: 2\n...\n"}) || !reflect.DeepEqual(lines, []int{2, 5}) {
		t.Errorf("docs %q lines %v", got, lines)
	}
	if _, err := splitDocuments([]byte("a: 1\n--- b\n"), 10); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad separator: %v", err)
	}
}

// The 2014 manifests: v1beta2 beside v1beta1, and a manifest without an id
// named after its file when it is read from one.
func TestDecodeLegacyNames(t *testing.T) {
	const noID = "version: v1beta2\ncontainers:\n  - name: simple-echo\n    image: busybox\n    ports:\n      - {name: nc-echo, hostPort: 8080, containerPort: 8080}\n"
	pods, errs := Decode("file", "/etc/berth/pods/Simple_Echo.manifest", []byte(noID), Options{FileOrigin: true, Level: "privileged"})
	if len(errs) != 0 || len(pods) != 1 {
		t.Fatalf("pods %v errs %v", pods, errs)
	}
	name := pods[0].Pod.Name
	if name != LegacyPodName("/etc/berth/pods/Simple_Echo.manifest") || !strings.HasPrefix(name, "simpleechomanif") || len(name) != 45 {
		t.Errorf("name %q", name)
	}
	if pods[0].Pod.Spec.Containers[0].Ports[0].HostPort != 8080 {
		t.Errorf("ports %+v", pods[0].Pod.Spec.Containers[0].Ports)
	}
	if other := LegacyPodName("/srv/pods/Simple_Echo.manifest"); other == name || other[:15] != name[:15] {
		t.Errorf("another path gives %q", other)
	}
	// The seed kubelet's own example: docs of the 2014 fluentd-es manifest
	// show its containers named after "fluentdesmanife2u464h05heqcpotoddodpnehjaqsde",
	// the name of /etc/kubernetes/manifests/fluentd-es.manifest.
	if got := LegacyPodName("/etc/kubernetes/manifests/fluentd-es.manifest"); got != "fluentdesmanife2u464h05heqcpotoddodpnehjaqsde" {
		t.Errorf("seed name %q", got)
	}

	// Without a file, the id is required, and named as such.
	for origin, want := range map[string]string{
		"http://h/pods": "http://h/pods: id: Required value",
	} {
		_, errs := Decode("http", origin, []byte(noID), Options{})
		if len(errs) != 1 || errs[0].Error() != want {
			t.Errorf("%s: %v, want %q", origin, errs, want)
		}
	}
	// A list's items need their ids even in a file.
	_, errs = Decode("file", "/p/l.manifest", []byte("- "+strings.ReplaceAll(noID, "\n", "\n  ")), Options{FileOrigin: true})
	if len(errs) != 1 || errs[0].Error() != "/p/l.manifest: [0].id: Required value" {
		t.Errorf("list: %v", errs)
	}
	// An id wins over the file name; a bad id is named as id.
	pods, _ = Decode("file", "/p/x.manifest", []byte(strings.Replace(noID, "containers:", "id: echo\ncontainers:", 1)), Options{FileOrigin: true, Level: "privileged"})
	if len(pods) != 1 || pods[0].Pod.Name != "echo" {
		t.Errorf("id: %v", pods)
	}
	_, errs = Decode("file", "/p/x.manifest", []byte(strings.Replace(noID, "containers:", "id: Echo_1\ncontainers:", 1)), Options{FileOrigin: true, Level: "privileged"})
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), `/p/x.manifest: default/Echo_1: id: Invalid value: "Echo_1"`) {
		t.Errorf("bad id: %v", errs)
	}
	_, errs = Decode("file", "/p/x.manifest", []byte(strings.Replace(noID, "v1beta2", "v1beta3", 1)), Options{FileOrigin: true})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `version: Unsupported value: "v1beta3": supported values: "v1beta1", "v1beta2"`) {
		t.Errorf("v1beta3: %v", errs)
	}
}

// The 2014 salt and container-vm manifests, as published.
func TestDecodeLegacy2014Manifests(t *testing.T) {
	manifests := map[string]string{
		"cadvisor.manifest": `version: v1beta2
id: cadvisor-agent
containers:
  - name: cadvisor
    image: google/cadvisor:0.6.2
    ports:
      - name: http
        containerPort: 8080
        hostPort: 4194
    volumeMounts:
      - name: varrun
        mountPath: /var/run
        readOnly: false
      - name: varlibdocker
        mountPath: /var/lib/docker
        readOnly: true
      - name: cgroups
        mountPath: /sys/fs/cgroup
        readOnly: true
volumes:
  - name: varrun
    source:
      hostDir:
        path: /var/run
  - name: varlibdocker
    source:
      hostDir:
        path: /var/lib/docker
  - name: cgroups
    source:
      hostDir:
        path: /sys/fs/cgroup
`,
		"fluentd-es.manifest": `version: v1beta2
id: fluentd-to-elasticsearch
containers:
  - name: fluentd-es
    image: kubernetes/fluentd-elasticsearch
    volumeMounts:
      - name: containers
        mountPath: /var/lib/docker/containers
        readOnly: true
volumes:
  - name: containers
    source:
      hostDir:
        path: /var/lib/docker/containers
`,
		"containers.yaml": `version: v1beta1
containers:
  - name: simple-echo
    image: busybox
    command: ['nc', '-p', '8080', '-l', '-l', '-e', 'echo', 'hello world!']
    ports:
      - name: nc-echo
        hostPort: 8080
        containerPort: 8080
`,
		"guestbook.yaml": `version: v1beta2
id: container-vm-guestbook
containers:
  - name: redis
    image: dockerfile/redis
    volumeMounts:
      - name: redis-data
        mountPath: /data

  - name: guestbook
    image: google/guestbook-python-redis
    ports:
      - name: www
        hostPort: 80
        containerPort: 80

volumes:
  - name: redis-data`,
		"etcd.manifest": `version: v1beta2
id: etcd-server
hostNetwork: true
containers:
  - name: etcd-container
    image: gcr.io/google_containers/etcd:2.0.9
    command: ['/bin/sh', '-c', '/usr/local/bin/etcd --addr 127.0.0.1:4001 --data-dir /var/etcd/data 1>>/var/log/etcd.log 2>&1']
    imagePullPolicy: PullIfNotPresent
    ports:
      - name: clientport
        containerPort: 4001
        hostPort: 4001
    livenessProbe:
      httpGet:
        host: 127.0.0.1
        port: 4001
        path: /v2/keys/
      initialDelaySeconds: 15
      timeoutSeconds: 15
    volumeMounts:
      - name: varetcd
        mountPath: /var/etcd
volumes:
  - name: varetcd
    source:
      hostDir:
        path: /mnt/master-pd/var/etcd
`,
		"late.manifest": `version: v1beta1
id: late
dnsPolicy: Default
containers:
  - name: app
    image: busybox
    imagePullPolicy: PullAlways
    terminationMessagePath: /dev/termination-log
    capabilities:
      add: [NET_ADMIN]
    readinessProbe:
      tcpSocket:
        port: "8080"
    lifecycle:
      preStop:
        exec:
          command: [/bin/sh, -c, sleep 1]
`,
	}
	for name, data := range manifests {
		pods, errs := Decode("file", "/etc/kubernetes/manifests/"+name, []byte(data), Options{FileOrigin: true, Level: "privileged"})
		if len(errs) != 0 || len(pods) != 1 {
			t.Errorf("%s: pods %d errs %v", name, len(pods), errs)
			continue
		}
		p := pods[0].Pod
		switch name {
		case "cadvisor.manifest":
			if p.Name != "cadvisor-agent" || p.Spec.Volumes[2].HostPath == nil || p.Spec.Volumes[2].HostPath.Path != "/sys/fs/cgroup" ||
				!p.Spec.Containers[0].VolumeMounts[1].ReadOnly || p.Spec.Containers[0].Ports[0].HostPort != 4194 {
				t.Errorf("cadvisor: %+v", p.Spec)
			}
		case "etcd.manifest":
			c := p.Spec.Containers[0]
			if !p.Spec.HostNetwork || c.ImagePullPolicy != v1.PullIfNotPresent || c.LivenessProbe.HTTPGet.Host != "127.0.0.1" || c.LivenessProbe.TimeoutSeconds != 15 {
				t.Errorf("etcd: %+v", p.Spec)
			}
		case "late.manifest":
			c := p.Spec.Containers[0]
			if p.Spec.DNSPolicy != v1.DNSDefault || c.ImagePullPolicy != v1.PullAlways || c.TerminationMessagePath != "/dev/termination-log" ||
				c.SecurityContext.Capabilities.Add[0] != "NET_ADMIN" || c.ReadinessProbe.TCPSocket.Port.IntValue() != 8080 ||
				c.Lifecycle.PreStop.Exec.Command[2] != "sleep 1" {
				t.Errorf("late: %+v", c)
			}
		case "guestbook.yaml":
			if p.Spec.Volumes[0].EmptyDir == nil || len(p.Spec.Containers) != 2 {
				t.Errorf("guestbook: %+v", p.Spec)
			}
		case "containers.yaml":
			if !strings.HasPrefix(p.Name, "containersyaml") || p.Spec.Containers[0].Args[0] != "nc" || p.Spec.RestartPolicy != v1.RestartPolicyAlways {
				t.Errorf("containers.yaml: %s %+v", p.Name, p.Spec)
			}
		}
	}
}
