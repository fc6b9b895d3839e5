package stats

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	cadvisorv1 "github.com/google/cadvisor/info/v1"
	cadvisorv2 "github.com/google/cadvisor/info/v2"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/model"
	berthrt "github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

func labels(node, ns, pod, uid, ctr string) map[string]string {
	l := map[string]string{
		berthrt.LabelManaged:       "true",
		berthrt.LabelNode:          node,
		berthrt.LabelPodNamespace:  ns,
		berthrt.LabelPodName:       pod,
		berthrt.LabelContainerName: ctr,
	}
	if uid != "" {
		l[berthrt.LabelPodUID] = uid
	}
	return l
}

// info is a container with two samples; cpu and mem are of the latest.
func info(l map[string]string, created time.Time, cpu, nano, mem uint64, ifaces ...cadvisorv1.InterfaceStats) cadvisorv2.ContainerInfo {
	t0 := time.Unix(1000, 0)
	s := func(ts time.Time, cpu, mem uint64, inst bool) *cadvisorv2.ContainerStats {
		st := &cadvisorv2.ContainerStats{
			Timestamp: ts,
			Cpu:       &cadvisorv1.CpuStats{Usage: cadvisorv1.CpuUsage{Total: cpu}},
			Memory:    &cadvisorv1.MemoryStats{Usage: mem + 100, WorkingSet: mem, RSS: mem / 2},
		}
		if inst {
			st.CpuInst = &cadvisorv2.CpuInstStats{Usage: cadvisorv2.CpuInstUsage{Total: nano}}
		}
		if len(ifaces) > 0 {
			st.Network = &cadvisorv2.NetworkStats{Interfaces: ifaces}
		}
		return st
	}
	return cadvisorv2.ContainerInfo{
		Spec: cadvisorv2.ContainerSpec{
			CreationTime: created, Labels: l, Namespace: "docker",
			HasMemory: true, Memory: cadvisorv2.MemorySpec{Limit: 1 << 63},
		},
		// Deliberately newest first: latest() must not rely on order.
		Stats: []*cadvisorv2.ContainerStats{s(t0.Add(time.Second), cpu, mem, true), s(t0, cpu/2, mem/2, false)},
	}
}

func TestBuildSummary(t *testing.T) {
	st, err := store.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.UpsertPod(&model.Pod{Key: "default/web", Source: "file",
		Spec: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: types.UID("uid-from-store")}}}); err != nil {
		t.Fatal(err)
	}
	created := time.Unix(500, 0)
	eth0 := cadvisorv1.InterfaceStats{Name: "eth0", RxBytes: 10, TxBytes: 20}
	lo := cadvisorv1.InterfaceStats{Name: "lo", RxBytes: 1000, TxBytes: 1000}
	ens := cadvisorv1.InterfaceStats{Name: "ens3", RxBytes: 500, TxBytes: 500}
	infos := map[string]cadvisorv2.ContainerInfo{
		"/":               info(nil, created, 9000, 300, 4000, lo, ens, cadvisorv1.InterfaceStats{Name: "veth1", RxBytes: 5}),
		"/docker/sandbox": info(labels("n1", "prod", "api", "u1", model.SandboxName), created, 10, 1, 100, eth0, lo),
		"/docker/app-old": info(labels("n1", "prod", "api", "u1", "app"), created, 1000, 10, 2000),
		"/docker/app-new": info(labels("n1", "prod", "api", "u1", "app"), created.Add(time.Minute), 3000, 30, 5000),
		"/docker/side":    info(labels("n1", "prod", "api", "u1", "side"), created, 7, 2, 64),
		// no UID label: taken from the store
		"/docker/web": info(labels("", "default", "web", "", "nginx"), created, 1, 1, 1),
		// other node, unmanaged, unlabelled: ignored
		"/docker/other":     info(labels("n2", "prod", "x", "u2", "c"), created, 1, 1, 1),
		"/docker/unmanaged": info(map[string]string{berthrt.LabelPodName: "y", berthrt.LabelContainerName: "c"}, created, 1, 1, 1),
		"/docker/plain":     info(nil, created, 1, 1, 1),
	}
	got := buildSummary(summaryInput{
		NodeName: "n1", Infos: infos, MemoryCapacity: 10000, Store: st,
		RootFs: &cadvisorv2.FsInfo{Capacity: 100, Available: 60, Usage: 40},
	})

	n := got.Node
	if n.NodeName != "n1" || n.CPU == nil || *n.CPU.UsageCoreNanoSeconds != 9000 || *n.CPU.UsageNanoCores != 300 {
		t.Errorf("node cpu = %+v", n.CPU)
	}
	if n.Memory == nil || *n.Memory.WorkingSetBytes != 4000 || *n.Memory.UsageBytes != 4100 || *n.Memory.RSSBytes != 2000 || *n.Memory.AvailableBytes != 6000 {
		t.Errorf("node memory = %+v", n.Memory)
	}
	if n.Network == nil || n.Network.Name != "ens3" || len(n.Network.Interfaces) != 3 {
		t.Errorf("node network = %+v (want default ens3: busiest non-loopback without eth0)", n.Network)
	}
	if n.Fs == nil || *n.Fs.CapacityBytes != 100 || *n.Fs.UsedBytes != 40 || *n.Fs.AvailableBytes != 60 {
		t.Errorf("node fs = %+v", n.Fs)
	}

	if len(got.Pods) != 2 {
		t.Fatalf("pods = %+v, want default/web and prod/api", got.Pods)
	}
	web, api := got.Pods[0], got.Pods[1]
	if web.PodRef != (PodReference{Name: "web", Namespace: "default", UID: "uid-from-store"}) {
		t.Errorf("web podRef = %+v", web.PodRef)
	}
	if api.PodRef != (PodReference{Name: "api", Namespace: "prod", UID: "u1"}) {
		t.Errorf("api podRef = %+v", api.PodRef)
	}
	if len(api.Containers) != 2 || api.Containers[0].Name != "app" || api.Containers[1].Name != "side" {
		t.Fatalf("api containers = %+v", api.Containers)
	}
	app := api.Containers[0]
	if *app.Memory.WorkingSetBytes != 5000 || *app.CPU.UsageNanoCores != 30 || app.Memory.AvailableBytes != nil {
		t.Errorf("app = cpu %+v memory %+v (want the newest instance, no limit)", app.CPU, app.Memory)
	}
	if api.Network == nil || api.Network.Name != "eth0" || *api.Network.RxBytes != 10 {
		t.Errorf("api network = %+v (want the sandbox's eth0)", api.Network)
	}
	// Totals: sandbox + both app instances still running + side.
	if *api.Memory.WorkingSetBytes != 100+2000+5000+64 || *api.CPU.UsageCoreNanoSeconds != 10+1000+3000+7 || *api.CPU.UsageNanoCores != 1+10+30+2 {
		t.Errorf("api totals = cpu %+v memory %+v", api.CPU, api.Memory)
	}

	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"nodeName":"n1"`, `"usageNanoCores":300`, `"workingSetBytes":4000`, `"podRef":{"name":"api","namespace":"prod","uid":"u1"}`, `"name":"eth0","rxBytes":10`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b)
		}
	}
}

func TestBuildSummaryEmpty(t *testing.T) {
	got := buildSummary(summaryInput{NodeName: "n"})
	b, _ := json.Marshal(got)
	if string(b) != `{"node":{"nodeName":"n","startTime":null},"pods":[]}` {
		t.Errorf("empty summary = %s", b)
	}
}

func TestUnavailable(t *testing.T) {
	u := Unavailable{Reason: "no cgroups"}
	if err := u.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err := u.Summary(context.Background())
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no cgroups") {
		t.Errorf("Summary err = %v", err)
	}
	if _, err := u.MachineInfo(context.Background()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("MachineInfo err = %v", err)
	}
	if u.Collector() != nil {
		t.Error("Collector should be nil")
	}
}

// TestSummaryKeepsIncarnationsApart: containers of one pod key but of two
// pods (a removed pod still stopping, and the pod of another source that
// took its name) are two pods of the summary, each with its own
// containers and totals, as the kubelet keys pods by UID.
func TestSummaryKeepsIncarnationsApart(t *testing.T) {
	created := time.Unix(500, 0)
	of := func(uid, source, ctr string) map[string]string {
		l := labels("n1", "default", "web", uid, ctr)
		l[berthrt.LabelSource] = source
		return l
	}
	got := buildSummary(summaryInput{NodeName: "n1", Infos: map[string]cadvisorv2.ContainerInfo{
		"/docker/old-pod": info(of("uid-old", "file", model.SandboxName), created, 1, 1, 1),
		"/docker/old-db":  info(of("uid-old", "file", "db"), created, 9000, 900, 90000),
		"/docker/new-pod": info(of("uid-new", "push", model.SandboxName), created.Add(time.Minute), 2, 2, 2),
		"/docker/new-app": info(of("uid-new", "push", "app"), created.Add(time.Minute), 30, 3, 300),
	}})
	if len(got.Pods) != 2 {
		t.Fatalf("pods = %+v, want the two incarnations of default/web apart", got.Pods)
	}
	if got.Pods[0].PodRef.UID != "uid-new" {
		t.Errorf("first pod %+v, want the newest of the key first", got.Pods[0].PodRef)
	}
	by := map[string]PodStats{}
	for _, p := range got.Pods {
		by[p.PodRef.UID+" "+p.Source] = p
	}
	old, cur := by["uid-old file"], by["uid-new push"]
	if len(old.Containers) != 1 || old.Containers[0].Name != "db" || *old.Memory.WorkingSetBytes != 1+90000 {
		t.Errorf("the removed pod = %+v", old)
	}
	if len(cur.Containers) != 1 || cur.Containers[0].Name != "app" || *cur.Memory.WorkingSetBytes != 2+300 || *cur.CPU.UsageNanoCores != 2+3 {
		t.Errorf("the new pod = %+v (memory %+v)", cur, cur.Memory)
	}
	if b, _ := json.Marshal(cur); strings.Contains(string(b), "push") {
		t.Errorf("the source is served in the kubelet's JSON: %s", b)
	}
}
