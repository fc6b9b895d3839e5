package main

// The second direct baseline of the start scenario makes the same four
// calls per pod as the minimal one, but with the container configs berth
// itself creates: they are taken from the warm-up berth's pod (docker
// inspect of its sandbox and app container) and cloned per pod, with the
// pod's name, UID, node, host port and sandbox ID put in. Bind mounts under
// berth's root_dir (the termination-log file) are made per pod as berth
// makes them, inside the timed part.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/go-connections/nat"
)

// podTemplate is one berth pod's containers as the engine holds them.
type podTemplate struct {
	sandbox, app containerSpec
	// What is replaced per pod in every string of the specs.
	podName, podUID, node, rootDir, sandboxID string
	// fileMounts are the bind sources under rootDir that are files (the
	// rest are directories).
	fileMounts map[string]bool
}

type containerSpec struct {
	Config     *container.Config
	HostConfig *container.HostConfig
}

// captureTemplate inspects the sandbox and app container of the only pod of
// berth node node.
func (b *bench) captureTemplate(ctx context.Context, node, podName, rootDir string) (*podTemplate, error) {
	list, err := b.cli.ContainerList(ctx, container.ListOptions{Filters: filters.NewArgs(filters.Arg("label", nodeLabel+"="+node))})
	if err != nil {
		return nil, err
	}
	t := &podTemplate{podName: podName, node: node, rootDir: rootDir, fileMounts: map[string]bool{}}
	for _, c := range list {
		ins, err := b.cli.ContainerInspect(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		spec := containerSpec{Config: ins.Config, HostConfig: ins.HostConfig}
		if ins.HostConfig.NetworkMode.IsContainer() {
			// Inspect shows the hostname of the namespace joined; the
			// engine refuses one in a create for such a container.
			spec.Config.Hostname, spec.Config.Domainname = "", ""
		}
		if ins.Config.Labels[ctrLabel] == "POD" {
			t.sandbox, t.sandboxID = spec, ins.ID
		} else {
			t.app = spec
		}
		t.podUID = ins.Config.Labels[uidLabel]
		for _, m := range ins.HostConfig.Mounts {
			if m.Type == mount.TypeBind && strings.HasPrefix(m.Source, rootDir+"/") {
				if fi, err := os.Stat(m.Source); err == nil && !fi.IsDir() {
					t.fileMounts[m.Source] = true
				}
			}
		}
	}
	if t.sandbox.Config == nil || t.app.Config == nil || t.podUID == "" {
		return nil, fmt.Errorf("berth node %s: want one sandbox and one app container, found %d containers", node, len(list))
	}
	return t, nil
}

// image is the sandbox's image: the pause image berth uses.
func (t *podTemplate) image() string { return t.sandbox.Config.Image }

// clonedPod is one pod's specs made from the template.
type clonedPod struct {
	name    string
	sandbox containerSpec
	app     containerSpec // its sandbox ID is sandboxToken until known
	// files and dirs are the bind sources to make before the create.
	files, dirs []string
	podDir      string // removed at the teardown, as berth removes its pod dirs
}

// sandboxToken stands for the sandbox's ID in a cloned app spec.
const sandboxToken = "@@SANDBOX@@"

// clone makes pod i's specs: node is the baseline's own berth node name
// (the running berth ignores it), root the baseline's root_dir, labels are
// added to both containers.
func (t *podTemplate) clone(name, uid, node, root string, hostPort int, labels map[string]string) (*clonedPod, error) {
	r := strings.NewReplacer(t.node, node, t.podUID, uid, t.podName, name, t.rootDir, root, t.sandboxID, sandboxToken)
	cp := &clonedPod{name: name, podDir: filepath.Join(root, "pods", uid)}
	for _, s := range []struct {
		in   containerSpec
		out  *containerSpec
		role string
	}{{t.sandbox, &cp.sandbox, "sandbox"}, {t.app, &cp.app, "app"}} {
		raw, err := json.Marshal(s.in)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(r.Replace(string(raw))), s.out); err != nil {
			return nil, err
		}
		for k, v := range labels {
			s.out.Config.Labels[k] = v
		}
		s.out.Config.Labels[labelRole] = s.role
		for port, bs := range s.out.HostConfig.PortBindings {
			for j := range bs {
				bs[j].HostPort = strconv.Itoa(hostPort)
			}
			s.out.HostConfig.PortBindings[port] = bs
		}
		for j, m := range s.out.HostConfig.Mounts {
			if m.Type != mount.TypeBind || !strings.HasPrefix(m.Source, root+"/") {
				continue
			}
			if t.fileMounts[s.in.HostConfig.Mounts[j].Source] {
				cp.files = append(cp.files, m.Source)
			} else {
				cp.dirs = append(cp.dirs, m.Source)
			}
		}
	}
	return cp, nil
}

// makeMounts makes the pod's bind sources as berth does: directories 0750,
// the termination-log files empty and world-writable.
func (cp *clonedPod) makeMounts() error {
	for _, d := range cp.dirs {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return err
		}
	}
	for _, f := range cp.files {
		if err := os.MkdirAll(filepath.Dir(f), 0o750); err != nil {
			return err
		}
		if err := os.WriteFile(f, nil, 0o666); err != nil {
			return err
		}
		if err := os.Chmod(f, 0o666); err != nil {
			return err
		}
	}
	return nil
}

// withSandbox is the app spec joined to sandbox id.
func (s containerSpec) withSandbox(id string) (*container.Config, *container.HostConfig) {
	cfg, hc := *s.Config, *s.HostConfig
	cfg.Labels = make(map[string]string, len(s.Config.Labels))
	for k, v := range s.Config.Labels {
		cfg.Labels[k] = strings.ReplaceAll(v, sandboxToken, id)
	}
	hc.NetworkMode = container.NetworkMode(strings.ReplaceAll(string(hc.NetworkMode), sandboxToken, id))
	hc.IpcMode = container.IpcMode(strings.ReplaceAll(string(hc.IpcMode), sandboxToken, id))
	hc.PidMode = container.PidMode(strings.ReplaceAll(string(hc.PidMode), sandboxToken, id))
	return &cfg, &hc
}

// minimalSpecs are the minimal configs of pod name: the pause image with
// the hostname and the port binding, and the app joined to its network
// namespace; nothing else.
func (b *bench) minimalSpecs(name string, hostPort int, labels map[string]string) (sandbox, app containerSpec) {
	l := func(role string) map[string]string {
		m := map[string]string{labelRole: role}
		for k, v := range labels {
			m[k] = v
		}
		return m
	}
	port := nat.Port(fmt.Sprintf("%d/tcp", appPort))
	sandbox = containerSpec{
		Config:     &container.Config{Image: b.pauseImage, Hostname: name, Labels: l("sandbox"), ExposedPorts: nat.PortSet{port: {}}},
		HostConfig: &container.HostConfig{PortBindings: nat.PortMap{port: {{HostPort: strconv.Itoa(hostPort)}}}},
	}
	app = containerSpec{
		Config:     &container.Config{Image: testImage, Cmd: []string{"sleep"}, Labels: l("app")},
		HostConfig: &container.HostConfig{NetworkMode: container.NetworkMode("container:" + sandboxToken)},
	}
	return sandbox, app
}
