package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/berth-dev/berth/runtime"
)

// kubectlNS is the second namespace of the kubectl tests.
const kubectlNS = "kubectl-ns"

// withMeta adds a namespace ("" keeps default) and the label app=app to
// the metadata of podYAML's pod name.
func withMeta(manifest, name, ns, app string) string {
	meta := "metadata:\n  name: " + name + "\n"
	extra := "  labels: {app: " + app + "}\n"
	if ns != "" {
		extra += "  namespace: " + ns + "\n"
	}
	return strings.Replace(manifest, meta, meta+extra, 1)
}

// waitRunningIn is waitPodRunning for a pod of namespace ns.
func waitRunningIn(t *testing.T, node, ns, pod string, apps ...string) map[string]string {
	t.Helper()
	names := append([]string{"POD"}, apps...)
	var ids map[string]string
	waitFor(t, waitLong, "pod "+ns+"/"+pod+" running", func() (bool, string) {
		list := listContainers(t, map[string]string{runtime.LabelNode: node, runtime.LabelPodNamespace: ns, runtime.LabelPodName: pod})
		var ok bool
		ids, ok = exactlyOne(list, names)
		return ok, describe(list)
	})
	return ids
}

// engineIP is the IP the engine gave a sandbox container: the pod's IP.
func engineIP(t *testing.T, sandboxID string) string {
	t.Helper()
	for _, n := range inspect(t, sandboxID).NetworkSettings.Networks {
		if n.IPAddress != "" {
			return n.IPAddress
		}
	}
	t.Fatalf("sandbox %s has no IP", sandboxID[:12])
	return ""
}

// waitReady waits until berth's own API reports ns/name Running with
// every container ready, so that kubectl's answers need no retries.
func (k *kubectlEnv) waitReady(t *testing.T, ns, name string) {
	t.Helper()
	waitFor(t, waitLong, "berth reports "+ns+"/"+name+" ready", func() (bool, string) {
		var p v1.Pod
		if err := k.b.getJSONAs(k.tokenFile, "/pods/"+ns+"/"+name, &p); err != nil {
			return false, err.Error()
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodReady && c.Status == v1.ConditionTrue && p.Status.PodIP != "" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%s %+v", p.Status.Phase, p.Status.Conditions)
	})
}

func TestKubectlGet(t *testing.T) {
	logsDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(logsDir, "kubectl-e2e.log"), []byte("a node log line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k := startKubectlEnv(t, "BERTH_CADVISOR_ENABLED=true", "BERTH_CADVISOR_HOUSEKEEPING=1s",
		"BERTH_SERVER_NODE_LOGS_DIR="+logsDir)
	node := k.b.Node
	writeFile(t, k.b.Pods, "web.yaml", withMeta(podYAML("web",
		Ctr{Name: "web", Env: [][2]string{{"PORT", "8080"}}, Port: 8080}), "web", "", "web"))
	writeFile(t, k.b.Pods, "other.yaml", withMeta(podYAML("other", Ctr{Name: "main", Args: []string{"sleep"}}), "other", "", "other"))
	writeFile(t, k.b.Pods, "web2.yaml", withMeta(podYAML("web2", Ctr{Name: "main", Args: []string{"sleep"}}), "web2", kubectlNS, "web"))
	writeFile(t, k.b.Pods, "settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: one, b: two}\n")
	writeFile(t, k.b.Pods, "creds.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\ntype: Opaque\nstringData: {password: kubectl-e2e}\n")
	ids := waitPodRunning(t, node, "web", "web")
	waitPodRunning(t, node, "other", "main")
	waitRunningIn(t, node, kubectlNS, "web2", "main")
	for _, p := range [][2]string{{"default", "web"}, {"default", "other"}, {kubectlNS, "web2"}} {
		k.waitReady(t, p[0], p[1])
	}
	ip := engineIP(t, ids["POD"])
	podHeader := []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE"}
	webRow := []string{"web", "1/1", "Running", "0", "<age>"}

	t.Run("get pods", func(t *testing.T) {
		rows := table(k.ok(t, "get", "pods").stdout)
		if len(rows) != 3 {
			t.Fatalf("want a header and rows web and other: %q", rows)
		}
		wantRow(t, "header", head(rows), podHeader)
		wantRow(t, "web", rowOf(rows, 0, "web"), webRow)
		wantRow(t, "other", rowOf(rows, 0, "other"), []string{"other", "1/1", "Running", "0", "<age>"})
	})
	for _, args := range [][]string{{"get", "po"}, {"get", "pods", "web"}, {"get", "pod/web"}, {"get", "pod", "web"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			rows := table(k.ok(t, args...).stdout)
			if want := map[bool]int{true: 3, false: 2}[args[1] == "po"]; len(rows) != want {
				t.Fatalf("want a header and %d rows: %q", want-1, rows)
			}
			wantRow(t, "header", head(rows), podHeader)
			wantRow(t, "web", rowOf(rows, 0, "web"), webRow)
		})
	}
	t.Run("get pods -o wide", func(t *testing.T) {
		rows := table(k.ok(t, "get", "pods", "-o", "wide").stdout)
		wantRow(t, "header", head(rows), []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE", "READINESS", "GATES"})
		wantRow(t, "web", rowOf(rows, 0, "web"), []string{"web", "1/1", "Running", "0", "<age>", ip, node, "<none>", "<none>"})
	})
	t.Run("get pod -o yaml", func(t *testing.T) {
		out := k.ok(t, "get", "pod", "web", "-o", "yaml").stdout
		var p v1.Pod
		if err := yaml.UnmarshalStrict([]byte(out), &p); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if p.APIVersion != "v1" || p.Kind != "Pod" || p.Name != "web" || p.Namespace != "default" || p.Labels["app"] != "web" ||
			p.Spec.NodeName != node || p.Status.PodIP != ip || p.Status.Phase != v1.PodRunning || p.UID == "" || p.ResourceVersion == "" {
			t.Errorf("want Pod default/web on %s with IP %s, Running, a uid and resourceVersion:\n%s", node, ip, out)
		}
	})
	t.Run("get pods -l app=web", func(t *testing.T) {
		rows := table(k.ok(t, "get", "pods", "-l", "app=web").stdout)
		if len(rows) != 2 {
			t.Fatalf("want the header and web only: %q", rows)
		}
		wantRow(t, "web", rows[1], webRow)
		if rows := table(k.ok(t, "get", "pods", "-l", "app!=web").stdout); len(rows) != 2 || rows[1][0] != "other" {
			t.Errorf("-l app!=web: want other only: %q", rows)
		}
	})
	t.Run("get pods -A", func(t *testing.T) {
		rows := table(k.ok(t, "get", "pods", "-A").stdout)
		if len(rows) != 4 {
			t.Fatalf("want the header and three pods: %q", rows)
		}
		wantRow(t, "header", head(rows), append([]string{"NAMESPACE"}, podHeader...))
		wantRow(t, "web", rowOf(rows, 1, "web"), append([]string{"default"}, webRow...))
		wantRow(t, "web2", rowOf(rows, 1, "web2"), []string{kubectlNS, "web2", "1/1", "Running", "0", "<age>"})
	})
	t.Run("get pods -n", func(t *testing.T) {
		rows := table(k.ok(t, "get", "pods", "-n", kubectlNS).stdout)
		if len(rows) != 2 {
			t.Fatalf("want the header and web2 only: %q", rows)
		}
		wantRow(t, "web2", rows[1], []string{"web2", "1/1", "Running", "0", "<age>"})
	})
	t.Run("get pods -o name", func(t *testing.T) {
		lines := strings.Fields(k.ok(t, "get", "pods", "-o", "name").stdout)
		slices.Sort(lines)
		if !slices.Equal(lines, []string{"pod/other", "pod/web"}) {
			t.Errorf("got %q, want pod/other pod/web", lines)
		}
	})
	t.Run("get pods -o jsonpath", func(t *testing.T) {
		names := strings.Fields(k.ok(t, "get", "pods", "-o", "jsonpath={.items[*].metadata.name}").stdout)
		slices.Sort(names)
		if !slices.Equal(names, []string{"other", "web"}) {
			t.Errorf("got %q, want other web", names)
		}
		if out := k.ok(t, "get", "pod", "web", "-o", "jsonpath={.spec.nodeName} {.status.podIP}").stdout; out != node+" "+ip {
			t.Errorf("jsonpath of one pod: %q, want %q", out, node+" "+ip)
		}
	})
	t.Run("get a missing pod", func(t *testing.T) {
		r := k.run(t, "", "get", "pods", "nosuch")
		if r.code != 1 || r.stdout != "" || r.stderr != `Error from server (NotFound): pods "nosuch" not found`+"\n" {
			t.Errorf("want exit 1 and kubectl's NotFound line: %s", r)
		}
	})

	t.Run("describe pod", func(t *testing.T) {
		r := k.eventually(t, "describe pod web with its Started event", func(r kubectlRun) bool {
			// kubectl 1.37 puts the event's fieldPath before its message.
			return regexp.MustCompile(`(?m)^  Normal +Started +\S+ +\S+ +(spec\.containers\{web\}: )?Started container web$`).MatchString(r.stdout)
		}, "describe", "pod", "web")
		for _, want := range []string{
			`(?m)^Name: +web$`, `(?m)^Namespace: +default$`, `(?m)^Node: +` + regexp.QuoteMeta(node) + `/\S*$`,
			`(?m)^Labels: +app=web$`, `(?m)^Status: +Running$`, `(?m)^IP: +` + regexp.QuoteMeta(ip) + `$`,
			`(?m)^Containers:$`, `(?m)^  web:$`, `(?m)^    Container ID: +docker://` + ids["web"] + `$`,
			`(?m)^    Image: +` + regexp.QuoteMeta(testImage) + `$`, `(?m)^    Port: +8080/TCP$`,
			`(?m)^    State: +Running$`, `(?m)^    Ready: +True$`, `(?m)^    Restart Count: +0$`,
			`(?m)^Conditions:$`, `(?m)^  Ready +True *$`, `(?m)^Events:$`,
		} {
			if !regexp.MustCompile(want).MatchString(r.stdout) {
				t.Errorf("describe pod web lacks %s:\n%s", want, r.stdout)
			}
		}
		if r.stderr != "" {
			t.Errorf("describe pod web: stderr %q", r.stderr)
		}
	})
	t.Run("describe node", func(t *testing.T) {
		r := k.ok(t, "describe", "node", node)
		for _, want := range []string{
			`(?m)^Name: +` + regexp.QuoteMeta(node) + `$`, `(?m)^Conditions:$`, `(?m)^  Ready +True `,
			`(?m)^Capacity:$`, `(?m)^  cpu: +[0-9]+$`, `(?m)^  memory: +[0-9]+Ki$`, `(?m)^Allocatable:$`,
			`(?m)^Non-terminated Pods: +\([0-9]+ in total\)$`, `(?m)^  default +web +`, `(?m)^  default +other +`,
			`(?m)^  ` + kubectlNS + ` +web2 +`,
		} {
			if !regexp.MustCompile(want).MatchString(r.stdout) {
				t.Errorf("describe node lacks %s:\n%s", want, r.stdout)
			}
		}
		if r.stderr != "" {
			t.Errorf("describe node: stderr %q", r.stderr)
		}
	})
	t.Run("get nodes", func(t *testing.T) {
		rows := table(k.ok(t, "get", "nodes").stdout)
		if len(rows) != 2 {
			t.Fatalf("want the header and the node: %q", rows)
		}
		wantRow(t, "header", head(rows), []string{"NAME", "STATUS", "ROLES", "AGE", "VERSION"})
		wantRow(t, "node", rows[1], []string{node, "Ready", "<none>", "<age>", "<any>"})
	})
	t.Run("get events", func(t *testing.T) {
		r := k.eventually(t, "the event Started of pod/web", func(r kubectlRun) bool {
			for _, row := range table(r.stdout) {
				if len(row) > 4 && row[1] == "Normal" && row[2] == "Started" && row[3] == "pod/web" &&
					strings.Join(row[4:], " ") == "Started container web" {
					return true
				}
			}
			return false
		}, "get", "events")
		wantRow(t, "header", head(table(r.stdout)), []string{"LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"})
	})
	t.Run("get configmaps", func(t *testing.T) {
		rows := table(k.ok(t, "get", "configmaps").stdout)
		wantRow(t, "header", head(rows), []string{"NAME", "DATA", "AGE"})
		wantRow(t, "settings", rowOf(rows, 0, "settings"), []string{"settings", "2", "<age>"})
	})
	t.Run("get secrets", func(t *testing.T) {
		rows := table(k.ok(t, "get", "secrets").stdout)
		wantRow(t, "header", head(rows), []string{"NAME", "TYPE", "DATA", "AGE"})
		wantRow(t, "creds", rowOf(rows, 0, "creds"), []string{"creds", "Opaque", "1", "<age>"})
	})
	t.Run("wait --for=condition=Ready", func(t *testing.T) {
		if r := k.ok(t, "wait", "--for=condition=Ready", "pod/web", "--timeout=60s"); r.stdout != "pod/web condition met\n" {
			t.Errorf("stdout %q, want pod/web condition met", r.stdout)
		}
	})
	t.Run("top pod", func(t *testing.T) {
		num := regexp.MustCompile(`^[0-9]+m$`)
		mem := regexp.MustCompile(`^[0-9]+Mi$`)
		r := k.eventually(t, "a row of web with CPU and memory", func(r kubectlRun) bool {
			row := rowOf(table(r.stdout), 0, "web")
			return len(row) == 3 && num.MatchString(row[1]) && mem.MatchString(row[2])
		}, "top", "pod", "web")
		wantRow(t, "header", head(table(r.stdout)), []string{"NAME", "CPU(cores)", "MEMORY(bytes)"})
	})
	t.Run("top node", func(t *testing.T) {
		r := k.eventually(t, "a row of the node", func(r kubectlRun) bool {
			row := rowOf(table(r.stdout), 0, node)
			return len(row) == 5 && strings.HasSuffix(row[1], "m") && strings.HasSuffix(row[3], "Mi")
		}, "top", "node")
		wantRow(t, "header", head(table(r.stdout)), []string{"NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"})
	})
	t.Run("get --raw node logs", func(t *testing.T) {
		out := k.ok(t, "get", "--raw", "/api/v1/nodes/"+node+"/proxy/logs/").stdout
		if !strings.Contains(out, `href="kubectl-e2e.log"`) {
			t.Errorf("the listing lacks kubectl-e2e.log:\n%s", out)
		}
		if out := k.ok(t, "get", "--raw", "/api/v1/nodes/"+node+"/proxy/logs/kubectl-e2e.log").stdout; out != "a node log line\n" {
			t.Errorf("the file: %q", out)
		}
	})
	t.Run("get namespaces", func(t *testing.T) {
		rows := table(k.ok(t, "get", "namespaces").stdout)
		wantRow(t, "header", head(rows), []string{"NAME", "STATUS", "AGE"})
		wantRow(t, "default", rowOf(rows, 0, "default"), []string{"default", "Active", "<age>"})
		wantRow(t, kubectlNS, rowOf(rows, 0, kubectlNS), []string{kubectlNS, "Active", "<age>"})
	})
	t.Run("api-resources", func(t *testing.T) {
		rows := table(k.ok(t, "api-resources").stdout)
		wantRow(t, "header", head(rows), []string{"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"})
		for _, want := range [][]string{
			{"pods", "po", "v1", "true", "Pod"}, {"events", "ev", "v1", "true", "Event"}, {"nodes", "no", "v1", "false", "Node"},
			{"configmaps", "cm", "v1", "true", "ConfigMap"}, {"secrets", "v1", "true", "Secret"},
			{"pods", "metrics.k8s.io/v1beta1", "true", "PodMetrics"},
		} {
			found := false
			for _, r := range rows {
				found = found || slices.Equal(r, want)
			}
			if !found {
				t.Errorf("no row %q in:\n%s", want, k.ok(t, "api-resources").stdout)
			}
		}
	})
	t.Run("explain", func(t *testing.T) {
		out := k.ok(t, "explain", "pod.spec.containers.image").stdout
		if !regexp.MustCompile(`(?m)^FIELD: +image <string>$`).MatchString(out) || !strings.Contains(out, "Container image name.") {
			t.Errorf("explain from the OpenAPI document:\n%s", out)
		}
	})
	t.Run("debug is refused plainly", func(t *testing.T) {
		r := k.run(t, "", "debug", "web", "--image="+testImage, "-c", "debugger")
		if r.code != 1 || strings.Contains(r.stderr, "panic:") || !strings.HasPrefix(r.stderr, "error: ") && !strings.HasPrefix(r.stderr, "Error from server") {
			t.Errorf("want kubectl's one-line refusal of an ephemeral container: %s", r)
		}
		t.Logf("kubectl debug: %s", strings.TrimSpace(r.stderr))
	})
	t.Run("version", func(t *testing.T) {
		out := k.ok(t, "version").stdout
		if !regexp.MustCompile(`(?m)^Server Version: \S+$`).MatchString(out) {
			t.Errorf("no server version:\n%s", out)
		}
	})
	t.Run("a wrong token", func(t *testing.T) {
		wrong := filepath.Join(t.TempDir(), "wrong-token")
		if err := os.WriteFile(wrong, []byte("not-the-token\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		r := k.runWith(t, k.writeKubeconfig(t, wrong), "", "get", "pods")
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 1 || lines[len(lines)-1] != "error: You must be logged in to the server (Unauthorized)" {
			t.Errorf("want exit 1 and kubectl's line for the apiserver's 401: %s", r)
		}
	})
	// Last: it adds pod late.
	t.Run("get pods -w", func(t *testing.T) {
		s := k.start(t, "get", "pods", "-w", "-l", "app=late")
		writeFile(t, k.b.Pods, "late.yaml", withMeta(podYAML("late", Ctr{Name: "main", Args: []string{"sleep"}}), "late", "", "late"))
		s.waitLine(t, "late 1/1 Running", func(l string) bool {
			f := strings.Fields(l)
			return len(f) == 5 && f[0] == "late" && f[1] == "1/1" && f[2] == "Running"
		})
		s.collect(6 * time.Second) // past a controller resync (5 s)
		removeFile(t, k.b.Pods, "late.yaml")
		s.waitLine(t, "late Terminating", func(l string) bool {
			f := strings.Fields(l)
			return len(f) == 5 && f[0] == "late" && f[2] == "Terminating"
		})
		if f := strings.Fields(s.seen[0]); !slices.Equal(f, podHeader) {
			t.Errorf("first line %q, want the header", s.seen[0])
		}
		for i := 1; i < len(s.seen); i++ {
			if s.seen[i] == s.seen[i-1] {
				t.Errorf("identical consecutive rows %q in:\n%s", s.seen[i], strings.Join(s.seen, "\n"))
			}
		}
		for _, l := range s.seen[1:] {
			if f := strings.Fields(l); len(f) != 5 || f[0] != "late" || !ageRE.MatchString(f[4]) {
				t.Errorf("row %q is not a row of late with an age", l)
			}
		}
		t.Logf("kubectl get pods -w:\n%s", strings.Join(s.seen, "\n"))
		s.interrupt(t)
	})
}
