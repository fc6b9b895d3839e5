package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/runtime"
	cerrdefs "github.com/containerd/errdefs"
)

// The pod-spec fidelity test: pods that use each group of the
// mapping contract run on the real engine, and each container reports what
// it sees from inside (`testapp report`, one JSON line in its log).

// fidNodeIP is given to berth as node_ip, so status.hostIP is known.
const fidNodeIP = "192.0.2.77"

// fidReport mirrors testapp's Report.
type fidReport struct {
	Args         []string               `json:"args"`
	Env          []string               `json:"env"`
	UID          int                    `json:"uid"`
	GID          int                    `json:"gid"`
	Groups       []int                  `json:"groups"`
	Hostname     string                 `json:"hostname"`
	RootWritable bool                   `json:"rootWritable"`
	RootWriteErr string                 `json:"rootWriteErr"`
	NoNewPrivs   string                 `json:"noNewPrivs"`
	OOMScoreAdj  string                 `json:"oomScoreAdj"`
	IPCNamespace string                 `json:"ipcNamespace"`
	Cgroup       map[string]string      `json:"cgroup"`
	Files        map[string]string      `json:"files"`
	Stats        map[string]fidFileStat `json:"stats"`
	Writes       map[string]string      `json:"writes"`
	Statfs       map[string]string      `json:"statfs"`
	Waited       map[string]bool        `json:"waited"`
}

type fidFileStat struct {
	Mode  string `json:"mode"`
	Perm  uint32 `json:"perm"`
	UID   int    `json:"uid"`
	GID   int    `json:"gid"`
	IsDir bool   `json:"isDir"`
	Size  int64  `json:"size"`
	Err   string `json:"err"`
}

func (r *fidReport) env() map[string]string {
	m := map[string]string{}
	for _, kv := range r.Env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// fidPods are the manifests, by pod name. confDir is a hostPath directory
// holding app.conf.
func fidPods(confDir string) map[string]string {
	img := strconv.Quote(testImage)
	return map[string]string{
		// env values and expansion; hostname/subdomain, hostAliases, DNS.
		"fid-env": `apiVersion: v1
kind: Pod
metadata: {name: fid-env}
spec:
  terminationGracePeriodSeconds: 2
  hostname: web
  subdomain: sub
  hostAliases:
    - {ip: 10.1.2.3, hostnames: [foo.alias, bar.alias]}
  dnsPolicy: None
  dnsConfig:
    nameservers: [10.9.8.7]
    searches: [a.example, b.example]
    options: [{name: ndots, value: "2"}, {name: edns0}]
  containers:
    - name: app
      image: ` + img + `
      args: [report, --sleep, --cat, /etc/hosts, --cat, /etc/resolv.conf,
             "a1=$(C)", "a2=$$(A)", "a3=$(NOPE)", "a4=$(LATER)"]
      resources:
        limits: {memory: 64Mi}
        requests: {memory: 64Mi, cpu: 250m}
      env:
        - {name: PLAIN, value: plain-value}
        - {name: A, value: alpha}
        - {name: B, value: "$(A)-beta"}
        - {name: C, value: "$(B)-gamma"}
        - {name: FWD, value: "$(LATER)-fwd"}
        - {name: LATER, value: later}
        - {name: ESC, value: "$$(A)-esc"}
        - {name: UNDEF, value: "x-$(NOPE)"}
`,
		// downward API: fieldRef and resourceFieldRef.
		"fid-downward": `apiVersion: v1
kind: Pod
metadata:
  name: fid-downward
  labels: {app: fidelity, tier: t-1}
  annotations: {note: annotated value}
spec:
  terminationGracePeriodSeconds: 2
  containers:
    - name: app
      image: ` + img + `
      args: [report, --sleep, "a5=$(POD_NAME)"]
      resources:
        limits: {memory: 64Mi}
        requests: {memory: 64Mi, cpu: 250m}
      env:
        - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
        - {name: POD_NS, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
        - {name: POD_UID, valueFrom: {fieldRef: {fieldPath: metadata.uid}}}
        - {name: LBL, valueFrom: {fieldRef: {fieldPath: "metadata.labels['tier']"}}}
        - {name: ANN, valueFrom: {fieldRef: {fieldPath: "metadata.annotations['note']"}}}
        - {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
        - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
        - {name: HOST_IP, valueFrom: {fieldRef: {fieldPath: status.hostIP}}}
        - {name: FROM_DOWN, value: "$(POD_NAME)@$(NODE)"}
        - {name: MEM_MI, valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}}
        - {name: CPU_REQ_M, valueFrom: {resourceFieldRef: {resource: requests.cpu, divisor: 1m}}}
        - {name: CPU_LIM, valueFrom: {resourceFieldRef: {resource: limits.cpu}}}
`,
		// pod-level identity inherited, container override, fsGroup emptyDir.
		"fid-sec": `apiVersion: v1
kind: Pod
metadata: {name: fid-sec}
spec:
  terminationGracePeriodSeconds: 2
  securityContext: {runAsUser: 1000, runAsGroup: 3000, supplementalGroups: [4000], fsGroup: 2000, runAsNonRoot: true}
  volumes: [{name: scratch, emptyDir: {}}]
  containers:
    - name: inherit
      image: ` + img + `
      args: [report, --sleep, --write, /scratch/inherit.txt=i, --stat, /scratch, --stat, /scratch/inherit.txt]
      securityContext: {allowPrivilegeEscalation: false}
      volumeMounts: [{name: scratch, mountPath: /scratch}]
    - name: override
      image: ` + img + `
      args: [report, --sleep, --write, /scratch/override.txt=o]
      securityContext: {runAsUser: 1001}
      volumeMounts: [{name: scratch, mountPath: /scratch}]
`,
		// root, BestEffort: read-only rootfs, disk emptyDir, hostPath
		// subPath file, shared IPC.
		"fid-ro": `apiVersion: v1
kind: Pod
metadata: {name: fid-ro}
spec:
  terminationGracePeriodSeconds: 2
  volumes:
    - {name: data, emptyDir: {}}
    - {name: conf, hostPath: {path: ` + strconv.Quote(confDir) + `, type: Directory}}
  containers:
    - name: ro
      image: ` + img + `
      args: [report, --sleep, --write, /data/ro.txt=r, --stat, /data, --cat, /etc/app/app.conf, --stat, /etc/app/app.conf]
      securityContext: {readOnlyRootFilesystem: true}
      volumeMounts:
        - {name: data, mountPath: /data}
        - {name: conf, mountPath: /etc/app/app.conf, subPath: app.conf}
    - name: rw
      image: ` + img + `
      args: [report, --sleep]
`,
		// Guaranteed: a Memory emptyDir shared by an init and two app
		// containers; cgroup limits.
		"fid-mem": `apiVersion: v1
kind: Pod
metadata: {name: fid-mem}
spec:
  terminationGracePeriodSeconds: 2
  volumes: [{name: shared, emptyDir: {medium: Memory, sizeLimit: 16Mi}}]
  initContainers:
    - name: init
      image: ` + img + `
      args: [report, --write, /shared/init.txt=from-init]
      resources: {limits: {cpu: 100m, memory: 32Mi}, requests: {cpu: 100m, memory: 32Mi}}
      volumeMounts: [{name: shared, mountPath: /shared}]
  containers:
    - name: writer
      image: ` + img + `
      args: [report, --sleep, --write, /shared/writer.txt=from-writer, --cat, /shared/init.txt]
      resources: {limits: {cpu: 500m, memory: 64Mi}, requests: {cpu: 500m, memory: 64Mi}}
      volumeMounts: [{name: shared, mountPath: /shared}]
    - name: reader
      image: ` + img + `
      args: [report, --sleep, --wait, /shared/writer.txt, --cat, /shared/init.txt, --cat, /shared/writer.txt,
             --cat, /proc/mounts, --statfs, /shared, --stat, /shared]
      resources: {limits: {cpu: 100m, memory: 32Mi}, requests: {cpu: 100m, memory: 32Mi}}
      volumeMounts: [{name: shared, mountPath: /shared}]
`,
		// runAsNonRoot with the image's (default) user 0.
		"fid-nonroot": `apiVersion: v1
kind: Pod
metadata: {name: fid-nonroot}
spec:
  terminationGracePeriodSeconds: 2
  securityContext: {runAsNonRoot: true}
  containers:
    - name: app
      image: ` + img + `
      args: [report, --sleep]
`,
		// shareProcessNamespace: the sandbox is PID 1 and reaps orphans.
		"fid-pidns": `apiVersion: v1
kind: Pod
metadata: {name: fid-pidns}
spec:
  terminationGracePeriodSeconds: 2
  shareProcessNamespace: true
  containers:
    - name: app
      image: ` + img + `
      args: [orphans, "3"]
`,
		// termination message of a failed container, never restarted.
		"fid-term": `apiVersion: v1
kind: Pod
metadata: {name: fid-term}
spec:
  terminationGracePeriodSeconds: 2
  restartPolicy: Never
  containers:
    - name: app
      image: ` + img + `
      args: [report, --termination-message, "bye from fid-term", --exit, "3"]
`,
	}
}

// TestPodSpecFidelity checks the pod-spec mapping contract from inside the
// containers, in berth's /pods and in the engine. All pods start at once;
// each subtest checks one of them.
func TestPodSpecFidelity(t *testing.T) {
	b := startBerth(t, Options{Env: []string{"BERTH_NODE_IP=" + fidNodeIP}})
	confDir := t.TempDir()
	confText := "app-conf-" + randHex(6) + "\n"
	if err := os.WriteFile(filepath.Join(confDir, "app.conf"), []byte(confText), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, m := range fidPods(confDir) {
		writeFile(t, b.Pods, name+".yaml", m)
	}
	// One deadline for every wait, so a berth that rejects every pod fails
	// in about a minute and a half, not one minute per container.
	deadline := time.Now().Add(90 * time.Second)

	t.Run("env", func(t *testing.T) {
		r := fidReportOf(t, b, "fid-env", "app", deadline)
		fidWantEnv(t, r, map[string]string{
			"PLAIN": "plain-value",
			"A":     "alpha",
			"B":     "alpha-beta",
			"C":     "alpha-beta-gamma",
			"FWD":   "$(LATER)-fwd", // a later entry is not visible
			"LATER": "later",
			"ESC":   "$(A)-esc",
			"UNDEF": "x-$(NOPE)",
		})
		fidWantArgs(t, r, "a1=alpha-beta-gamma", "a2=$(A)", "a3=$(NOPE)", "a4=later")

		// hostname, subdomain FQDN and hostAliases in /etc/hosts.
		if r.Hostname != "web" {
			t.Errorf("hostname %q, want web", r.Hostname)
		}
		hosts := r.Files["/etc/hosts"]
		fqdn := "web.sub.default.svc.cluster.local"
		if !hostsHas(hosts, "", fqdn) {
			t.Errorf("/etc/hosts lacks the FQDN %s:\n%s", fqdn, hosts)
		}
		for _, h := range []string{"foo.alias", "bar.alias"} {
			if !hostsHas(hosts, "10.1.2.3", h) {
				t.Errorf("/etc/hosts lacks hostAlias 10.1.2.3 %s:\n%s", h, hosts)
			}
		}
		// dnsPolicy None: only dnsConfig.
		resolv := r.Files["/etc/resolv.conf"]
		var servers, searches, options []string
		for _, line := range strings.Split(resolv, "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			switch f[0] {
			case "nameserver":
				servers = append(servers, f[1:]...)
			case "search":
				searches = append(searches, f[1:]...)
			case "options":
				options = append(options, f[1:]...)
			}
		}
		slices.Sort(options)
		if !slices.Equal(servers, []string{"10.9.8.7"}) || !slices.Equal(searches, []string{"a.example", "b.example"}) ||
			!slices.Equal(options, []string{"edns0", "ndots:2"}) {
			t.Errorf("/etc/resolv.conf: nameservers %q searches %q options %q, want [10.9.8.7] [a.example b.example] [edns0 ndots:2]:\n%s",
				servers, searches, options, resolv)
		}
		// Burstable oom_score_adj, computed as the kubelet does.
		if mem := fidMemTotal(t); mem > 0 {
			adj := 1000 - (1000*64<<20)/mem
			adj = min(max(adj, 3), 999)
			if r.OOMScoreAdj != strconv.FormatInt(adj, 10) {
				t.Errorf("Burstable oom_score_adj %s, want %d", r.OOMScoreAdj, adj)
			}
		}
		fidSandboxOOM(t, fidSandbox(t, b, "fid-env", deadline))
	})

	t.Run("downward", func(t *testing.T) {
		r := fidReportOf(t, b, "fid-downward", "app", deadline)
		p := fidPod(t, b, "fid-downward", deadline, "podIP set", func(p *v1.Pod) bool { return p.Status.PodIP != "" })
		sb := fidSandbox(t, b, "fid-downward", deadline)
		sbIP := ""
		for _, n := range sb.NetworkSettings.Networks {
			if sbIP == "" && n != nil {
				sbIP = n.IPAddress
			}
		}
		fidWantEnv(t, r, map[string]string{
			"POD_NAME":  "fid-downward",
			"POD_NS":    "default",
			"POD_UID":   string(p.UID),
			"LBL":       "t-1",
			"ANN":       "annotated value",
			"NODE":      b.Node,
			"POD_IP":    sbIP,
			"HOST_IP":   fidNodeIP,
			"FROM_DOWN": "fid-downward@" + b.Node,

			"MEM_MI":    "64",
			"CPU_REQ_M": "250",
			"CPU_LIM":   strconv.Itoa(goruntime.NumCPU()), // no limit: the node's capacity
		})
		fidWantArgs(t, r, "a5=fid-downward")
		if p.UID == "" {
			t.Errorf("/pods: metadata.uid empty")
		}
		if sbIP == "" || p.Status.PodIP != sbIP {
			t.Errorf("/pods status.podIP %q, sandbox IP %q", p.Status.PodIP, sbIP)
		}
		if p.Status.HostIP != fidNodeIP {
			t.Errorf("/pods status.hostIP %q, want node_ip %s", p.Status.HostIP, fidNodeIP)
		}
	})

	t.Run("security", func(t *testing.T) {
		in := fidReportOf(t, b, "fid-sec", "inherit", deadline)
		ov := fidReportOf(t, b, "fid-sec", "override", deadline)
		if in.UID != 1000 || in.GID != 3000 {
			t.Errorf("inherit: uid:gid %d:%d, want the pod's 1000:3000", in.UID, in.GID)
		}
		if ov.UID != 1001 || ov.GID != 3000 {
			t.Errorf("override: uid:gid %d:%d, want 1001 (its own) : 3000 (the pod's)", ov.UID, ov.GID)
		}
		for name, r := range map[string]*fidReport{"inherit": in, "override": ov} {
			if !slices.Contains(r.Groups, 4000) || !slices.Contains(r.Groups, 2000) {
				t.Errorf("%s: groups %v, want supplementalGroups 4000 and fsGroup 2000", name, r.Groups)
			}
		}
		if in.NoNewPrivs != "1" {
			t.Errorf("inherit (allowPrivilegeEscalation false): NoNewPrivs %q, want 1", in.NoNewPrivs)
		}
		if ov.NoNewPrivs != "0" {
			t.Errorf("override (allowPrivilegeEscalation unset): NoNewPrivs %q, want 0", ov.NoNewPrivs)
		}
		// Disk emptyDir with fsGroup: group 2000, mode 02777, writable by a non-root uid.
		if st := in.Stats["/scratch"]; st.Err != "" || !st.IsDir || st.GID != 2000 || st.Perm != 0o2777 {
			t.Errorf("emptyDir with fsGroup: stat %+v, want a directory of group 2000 mode 02777", st)
		}
		if e := in.Writes["/scratch/inherit.txt"]; e != "" {
			t.Errorf("emptyDir with fsGroup: uid 1000 cannot write: %s", e)
		}
		if e := ov.Writes["/scratch/override.txt"]; e != "" {
			t.Errorf("emptyDir with fsGroup: uid 1001 cannot write: %s", e)
		}
		if st := in.Stats["/scratch/inherit.txt"]; st.Err != "" || st.GID != 2000 {
			t.Errorf("file made in the fsGroup emptyDir: stat %+v, want group 2000 (setgid dir)", st)
		}
	})

	t.Run("readonly-emptydir-hostpath-ipc", func(t *testing.T) {
		ro := fidReportOf(t, b, "fid-ro", "ro", deadline)
		rw := fidReportOf(t, b, "fid-ro", "rw", deadline)
		if ro.RootWritable {
			t.Errorf("readOnlyRootFilesystem: creating /rofs-probe worked")
		}
		if !rw.RootWritable {
			t.Errorf("root container without readOnlyRootFilesystem cannot write /: %s", rw.RootWriteErr)
		}
		if ro.UID != 0 {
			t.Errorf("ro: uid %d, want the image's 0", ro.UID)
		}
		if st := ro.Stats["/data"]; st.Err != "" || !st.IsDir || st.Perm != 0o777 {
			t.Errorf("disk emptyDir: stat %+v, want a directory of mode 0777", st)
		}
		if e := ro.Writes["/data/ro.txt"]; e != "" {
			t.Errorf("disk emptyDir not writable under a read-only rootfs: %s", e)
		}
		if got := ro.Files["/etc/app/app.conf"]; got != confText {
			t.Errorf("hostPath subPath file: /etc/app/app.conf = %q, want %q", got, confText)
		}
		if st := ro.Stats["/etc/app/app.conf"]; st.Err != "" || st.IsDir {
			t.Errorf("hostPath subPath file: stat %+v, want a regular file", st)
		}
		// BestEffort.
		for name, r := range map[string]*fidReport{"ro": ro, "rw": rw} {
			if r.OOMScoreAdj != "1000" {
				t.Errorf("%s: BestEffort oom_score_adj %s, want 1000", name, r.OOMScoreAdj)
			}
			fidCPUShares2(t, name, r.Cgroup)
		}
		// IPC: both containers in the sandbox's namespace, not the host's.
		sb := fidSandbox(t, b, "fid-ro", deadline)
		sbIPC, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/ipc", sb.State.Pid))
		if err != nil {
			t.Fatalf("sandbox IPC namespace: %v", err)
		}
		hostIPC, _ := os.Readlink("/proc/self/ns/ipc")
		if ro.IPCNamespace == "" || ro.IPCNamespace != rw.IPCNamespace || ro.IPCNamespace != sbIPC || sbIPC == hostIPC {
			t.Errorf("IPC namespaces: ro %q rw %q sandbox %q host %q; want ro = rw = sandbox != host",
				ro.IPCNamespace, rw.IPCNamespace, sbIPC, hostIPC)
		}
		fidSandboxOOM(t, sb)
	})

	t.Run("memory-emptydir-cgroups", func(t *testing.T) {
		in := fidReportOf(t, b, "fid-mem", "init", deadline)
		w := fidReportOf(t, b, "fid-mem", "writer", deadline)
		r := fidReportOf(t, b, "fid-mem", "reader", deadline)
		if e := in.Writes["/shared/init.txt"]; e != "" {
			t.Errorf("init cannot write the Memory emptyDir: %s", e)
		}
		if e := w.Writes["/shared/writer.txt"]; e != "" {
			t.Errorf("writer cannot write the Memory emptyDir: %s", e)
		}
		if got := w.Files["/shared/init.txt"]; got != "from-init" {
			t.Errorf("writer: /shared/init.txt = %q, want the init container's from-init", got)
		}
		if got := r.Files["/shared/init.txt"]; got != "from-init" {
			t.Errorf("reader: /shared/init.txt = %q, want the init container's from-init", got)
		}
		if !r.Waited["/shared/writer.txt"] || r.Files["/shared/writer.txt"] != "from-writer" {
			t.Errorf("reader: /shared/writer.txt = %q (appeared: %t), want the writer's from-writer",
				r.Files["/shared/writer.txt"], r.Waited["/shared/writer.txt"])
		}
		if got := r.Statfs["/shared"]; got != "0x1021994" {
			t.Errorf("Memory emptyDir: statfs type %s, want tmpfs 0x1021994", got)
		}
		if st := r.Stats["/shared"]; st.Err != "" || st.Perm != 0o777 {
			t.Errorf("Memory emptyDir: stat %+v, want mode 0777", st)
		}
		if typ, size := fidMount(r.Files["/proc/mounts"], "/shared"); typ != "tmpfs" || size != 16<<20 {
			t.Errorf("Memory emptyDir in /proc/mounts: type %q size %d, want tmpfs of sizeLimit %d:\n%s",
				typ, size, 16<<20, r.Files["/proc/mounts"])
		}
		p := fidPod(t, b, "fid-mem", deadline, "uid", func(p *v1.Pod) bool { return p.UID != "" })
		vol := "berth-" + string(p.UID) + "-shared"
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if v, err := cli().VolumeInspect(ctx, vol); err != nil {
			t.Errorf("Memory emptyDir: engine volume %s: %v", vol, err)
		} else if v.Options["type"] != "tmpfs" {
			t.Errorf("Memory emptyDir: engine volume %s options %v, want type tmpfs", vol, v.Options)
		}

		// Guaranteed: oom_score_adj and cgroup limits of the writer
		// (limits cpu 500m, memory 64Mi).
		for name, rep := range map[string]*fidReport{"init": in, "writer": w, "reader": r} {
			if want := fidOOM(-997); rep.OOMScoreAdj != strconv.Itoa(want) {
				t.Errorf("%s: Guaranteed oom_score_adj %s, want %d", name, rep.OOMScoreAdj, want)
			}
		}
		cg := w.Cgroup
		if cg["memory.max"] != strconv.Itoa(64<<20) {
			t.Errorf("writer: cgroup v%s memory limit %q, want %d", cg["version"], cg["memory.max"], 64<<20)
		}
		switch cg["version"] {
		case "1":
			if cg["memsw.max"] != strconv.Itoa(64<<20) {
				t.Errorf("writer: cgroup v1 memory.memsw.limit_in_bytes %q, want %d (no swap)", cg["memsw.max"], 64<<20)
			}
		case "2":
			if cg["swap.max"] != "0" {
				t.Errorf("writer: cgroup v2 memory.swap.max %q, want 0", cg["swap.max"])
			}
		}
		if cg["cpu.quota"] != "50000" || cg["cpu.period"] != "100000" {
			t.Errorf("writer: cgroup v%s CPU quota/period %s/%s, want 50000/100000 for limits.cpu 500m",
				cg["version"], cg["cpu.quota"], cg["cpu.period"])
		}
		if cg["version"] == "1" && cg["cpu.shares"] != "512" {
			t.Errorf("writer: cgroup v1 cpu.shares %s, want 512 for requests.cpu 500m", cg["cpu.shares"])
		}
		fidSandboxOOM(t, fidSandbox(t, b, "fid-mem", deadline))

		// The volume goes with the pod's containers.
		removeFile(t, b.Pods, "fid-mem.yaml")
		waitPodGone(t, b.Node, "fid-mem")
		waitFor(t, 20*time.Second, "Memory emptyDir volume removed with its pod", func() (bool, string) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := cli().VolumeInspect(ctx, vol)
			if err == nil {
				return false, "volume " + vol + " still exists"
			}
			return cerrdefs.IsNotFound(err), err.Error()
		})
	})

	t.Run("runAsNonRoot", func(t *testing.T) {
		p := fidPod(t, b, "fid-nonroot", deadline, "CreateContainerConfigError", func(p *v1.Pod) bool {
			cs := p.Status.ContainerStatuses
			return len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "CreateContainerConfigError"
		})
		msg := p.Status.ContainerStatuses[0].State.Waiting.Message
		if !strings.Contains(msg, "runAsNonRoot") || !strings.Contains(msg, "will run as root") {
			t.Errorf("runAsNonRoot: message %q, want %q", msg, "container has runAsNonRoot and image will run as root")
		}
		for _, c := range podContainers(t, b.Node, "fid-nonroot") {
			if c.Labels[runtime.LabelContainerName] == "app" {
				t.Errorf("runAsNonRoot: a container was made anyway: %s", describe([]container.Summary{c}))
			}
		}
	})

	t.Run("shareProcessNamespace", func(t *testing.T) {
		sb := fidSandbox(t, b, "fid-pidns", deadline)
		var app string
		waitFor(t, fidLeft(deadline), "fid-pidns: orphans made", func() (bool, string) {
			ids := running(podContainers(t, b.Node, "fid-pidns"))["app"]
			if len(ids) != 1 {
				return false, fmt.Sprintf("%d running app containers", len(ids))
			}
			app = ids[0]
			out, err := fidLogs(app)
			return err == nil && strings.Contains(string(out), "orphans: 3 made"), fmt.Sprintf("logs %q, %v", out, err)
		})
		ns := func(pid int) string {
			l, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		pidns := ns(sb.State.Pid)
		if got := ns(inspect(t, app).State.Pid); got != pidns {
			t.Fatalf("app PID namespace %s, want the sandbox's %s", got, pidns)
		}
		// Only the sandbox and the app remain: the exited orphans are reaped.
		waitFor(t, 10*time.Second, "orphans reaped by the sandbox", func() (bool, string) {
			procs := fidPIDNamespace(pidns)
			return len(procs) == 2, strings.Join(procs, "; ")
		})
	})

	t.Run("terminationMessage", func(t *testing.T) {
		p := fidPod(t, b, "fid-term", deadline, "terminated", func(p *v1.Pod) bool {
			cs := p.Status.ContainerStatuses
			return len(cs) == 1 && cs[0].State.Terminated != nil
		})
		cs := p.Status.ContainerStatuses[0]
		if term := cs.State.Terminated; term.ExitCode != 3 || term.Message != "bye from fid-term" {
			t.Errorf("terminated: exit %d message %q, want exit 3 message %q", term.ExitCode, term.Message, "bye from fid-term")
		}
		if cs.RestartCount != 0 {
			t.Errorf("restartPolicy Never: restartCount %d", cs.RestartCount)
		}
		fidPod(t, b, "fid-term", deadline, "phase Failed", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	})
}

func fidWantEnv(t *testing.T, r *fidReport, want map[string]string) {
	t.Helper()
	env := r.env()
	for _, k := range sortedKeys(want) {
		got, ok := env[k]
		if !ok {
			t.Errorf("env %s: unset, want %q", k, want[k])
		} else if got != want[k] {
			t.Errorf("env %s = %q, want %q", k, got, want[k])
		}
	}
}

// fidWantArgs: the process's arguments end with want (expanded args).
func fidWantArgs(t *testing.T, r *fidReport, want ...string) {
	t.Helper()
	if n := len(r.Args); n < len(want) || !slices.Equal(r.Args[n-len(want):], want) {
		t.Errorf("args expansion: args %q, want them to end with %q", r.Args, want)
	}
}

// fidReportOf waits until the newest container named ctr of pod has printed
// its report, and returns it.
func fidReportOf(t *testing.T, b *Berth, pod, ctr string, deadline time.Time) *fidReport {
	t.Helper()
	var rep *fidReport
	waitFor(t, fidLeft(deadline), pod+"/"+ctr+" report", func() (bool, string) {
		var newest *container.Summary
		list := podContainers(t, b.Node, pod)
		for i, c := range list {
			if c.Labels[runtime.LabelContainerName] == ctr && (newest == nil || c.Created > newest.Created) {
				newest = &list[i]
			}
		}
		if newest == nil {
			fidRejected(t, b, pod)
			return false, "no container; pod status: " + fidStatusText(b, pod) + "; containers " + describe(list)
		}
		out, err := fidLogs(newest.ID)
		if err != nil {
			return false, err.Error()
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if js, ok := strings.CutPrefix(sc.Text(), "REPORT "); ok {
				rep = &fidReport{}
				if err := json.Unmarshal([]byte(js), rep); err != nil {
					t.Fatalf("%s/%s: bad report %q: %v", pod, ctr, js, err)
				}
				if testing.Verbose() {
					t.Logf("%s/%s report: %s", pod, ctr, js)
				}
				return true, ""
			}
		}
		return false, fmt.Sprintf("no report yet in %s (%s); log %q", newest.ID[:12], newest.State, out)
	})
	return rep
}

// fidPIDNamespace lists "pid comm state" of the host's processes in PID
// namespace ns (a /proc/PID/ns/pid link).
func fidPIDNamespace(ns string) []string {
	var out []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid)); err != nil || l != ns {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ...
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) {
			out = append(out, string(stat[:i+1])+" "+string(stat[i+2]))
		}
	}
	return out
}

// fidRejected fails the test at once when berth logged that it rejected
// pod's manifest (the pod would never appear).
func fidRejected(t *testing.T, b *Berth, pod string) {
	t.Helper()
	if lines := fidRejectedLines(b.LogText(), pod); len(lines) > 0 {
		t.Fatalf("berth rejected the manifest of %s:\n%s", pod, strings.Join(lines, "\n"))
	}
}

// fidRejectedLines are the lines of log rejecting pod's manifest (the
// informer logs them, once each).
func fidRejectedLines(log, pod string) []string {
	var lines []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "manifest rejected") && strings.Contains(line, "default/"+pod+":") {
			lines = append(lines, line)
		}
	}
	return lines
}

func fidLogs(id string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := cli().ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var out, errOut bytes.Buffer
	_, err = stdcopy.StdCopy(&out, &errOut, rc)
	return append(out.Bytes(), errOut.Bytes()...), err
}

// fidPod waits until berth's /pods shows pod satisfying cond.
func fidPod(t *testing.T, b *Berth, pod string, deadline time.Time, what string, cond func(*v1.Pod) bool) *v1.Pod {
	t.Helper()
	var got *v1.Pod
	waitFor(t, fidLeft(deadline), pod+": "+what, func() (bool, string) {
		p, err := b.Pod(pod)
		if err != nil || p == nil {
			fidRejected(t, b, pod)
			return false, fmt.Sprintf("GET pod: %v (nil pod: %t)", err, p == nil)
		}
		got = p
		return cond(p), fidStatusText(b, pod)
	})
	return got
}

func fidStatusText(b *Berth, pod string) string {
	p, err := b.Pod(pod)
	if err != nil || p == nil {
		return fmt.Sprintf("not in /pods (%v)", err)
	}
	js, _ := json.Marshal(p.Status)
	return string(js)
}

// fidSandbox returns the engine's view of pod's running sandbox.
func fidSandbox(t *testing.T, b *Berth, pod string, deadline time.Time) container.InspectResponse {
	t.Helper()
	var id string
	waitFor(t, fidLeft(deadline), pod+" sandbox running", func() (bool, string) {
		list := podContainers(t, b.Node, pod)
		ids := running(list)["POD"]
		if len(ids) == 1 {
			id = ids[0]
			return true, ""
		}
		return false, describe(list)
	})
	return inspect(t, id)
}

// fidSandboxOOM: the sandbox's oom_score_adj is -998, in the engine's
// config and in the process.
func fidSandboxOOM(t *testing.T, sb container.InspectResponse) {
	t.Helper()
	want := fidOOM(-998)
	if sb.HostConfig.OomScoreAdj != want {
		t.Errorf("sandbox HostConfig.OomScoreAdj %d, want %d", sb.HostConfig.OomScoreAdj, want)
	}
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/oom_score_adj", sb.State.Pid)); err != nil {
		t.Errorf("sandbox oom_score_adj: %v", err)
	} else if got := strings.TrimSpace(string(data)); got != strconv.Itoa(want) {
		t.Errorf("sandbox process oom_score_adj %s, want %d", got, want)
	}
}

var (
	fidNegOOMOnce sync.Once
	fidNegOOM     bool
)

// fidOOM is the oom_score_adj berth can give for the kubelet's adj: a
// negative score needs CAP_SYS_RESOURCE, and where the host does not allow
// lowering scores (this test process cannot either) berth uses 0.
func fidOOM(adj int) int {
	fidNegOOMOnce.Do(func() {
		const file = "/proc/self/oom_score_adj"
		data, err := os.ReadFile(file)
		if err != nil {
			return
		}
		orig, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || orig <= -1000 {
			fidNegOOM = err == nil
			return
		}
		// Try to lower our own score by one, then put it back (raising is
		// always allowed).
		if os.WriteFile(file, []byte(strconv.Itoa(orig-1)), 0) == nil {
			fidNegOOM = true
			_ = os.WriteFile(file, []byte(strconv.Itoa(orig)), 0)
		}
	})
	if adj < 0 && !fidNegOOM {
		return 0
	}
	return adj
}

// fidCPUShares2: a container without CPU requests or limits gets the
// minimum 2 shares (cgroup v2: weight 1) and no quota.
func fidCPUShares2(t *testing.T, name string, cg map[string]string) {
	t.Helper()
	switch cg["version"] {
	case "1":
		if cg["cpu.shares"] != "2" {
			t.Errorf("%s: BestEffort cgroup v1 cpu.shares %s, want 2", name, cg["cpu.shares"])
		}
	case "2":
		if cg["cpu.weight"] != "1" {
			t.Errorf("%s: BestEffort cgroup v2 cpu.weight %s, want 1 (2 shares)", name, cg["cpu.weight"])
		}
	default:
		t.Errorf("%s: cgroup layout unknown: %v", name, cg)
	}
	if cg["cpu.quota"] != "max" {
		t.Errorf("%s: BestEffort CPU quota %s, want none", name, cg["cpu.quota"])
	}
}

// fidLeft is the time left before deadline, at least 5 s.
func fidLeft(deadline time.Time) time.Duration {
	return max(time.Until(deadline), 5*time.Second)
}

// hostsHas reports whether an /etc/hosts text has a line mapping name
// (to ip, when ip is not empty).
func hostsHas(hosts, ip, name string) bool {
	for _, line := range strings.Split(hosts, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(f[0], "#") || (ip != "" && f[0] != ip) {
			continue
		}
		if slices.Contains(f[1:], name) {
			return true
		}
	}
	return false
}

// fidMount returns the type and size= option (bytes) of the mount at dir.
func fidMount(mounts, dir string) (typ string, size int64) {
	for _, line := range strings.Split(mounts, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[1] != dir {
			continue
		}
		typ, size = f[2], 0
		for _, o := range strings.Split(f[3], ",") {
			v, ok := strings.CutPrefix(o, "size=")
			if !ok || v == "" {
				continue
			}
			mult := int64(1)
			switch v[len(v)-1] {
			case 'k', 'K':
				mult, v = 1<<10, v[:len(v)-1]
			case 'm', 'M':
				mult, v = 1<<20, v[:len(v)-1]
			case 'g', 'G':
				mult, v = 1<<30, v[:len(v)-1]
			}
			n, _ := strconv.ParseInt(v, 10, 64)
			size = n * mult
		}
	}
	return typ, size
}

// fidMemTotal is the node memory as berth reads it (MemTotal), 0 if unknown.
func fidMemTotal(t *testing.T) int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Logf("meminfo: %v", err)
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
