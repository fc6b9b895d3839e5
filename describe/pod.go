// Package describe prints a pod for a person, in kubectl describe pod's
// layout (its containers, volumes and recent events) with berth's own
// lines added: where the pod came from and why an update was refused. It
// is kept apart from kubectl's describe library (k8s.io/kubectl/pkg/describe),
// which prints none of these and links kustomize and every API group into
// the binary.
package describe

import (
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
)

// writer writes "key:\tvalue" lines at an indent level into a
// tabwriter, which aligns the values of consecutive keys as kubectl's does.
type writer struct{ tw *tabwriter.Writer }

func (d writer) line(level int, format string, args ...any) {
	fmt.Fprintf(d.tw, strings.Repeat("  ", level)+format+"\n", args...)
}

// Pod prints p and its events evs (those whose involvedObject is p) in
// kubectl describe pod's layout, with berth's own lines: the pod's source,
// origin and refused update, and a waiting container's message; now is
// the reference for event ages.
func Pod(w io.Writer, p *v1.Pod, evs []v1.Event, now time.Time) error {
	d := writer{tw: tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)}
	d.line(0, "Name:\t%s", p.Name)
	d.line(0, "Namespace:\t%s", p.Namespace)
	if p.Spec.NodeName != "" {
		node := p.Spec.NodeName
		if p.Status.HostIP != "" {
			node += "/" + p.Status.HostIP
		}
		d.line(0, "Node:\t%s", node)
	}
	if p.Status.StartTime != nil {
		d.line(0, "Start Time:\t%s", p.Status.StartTime.Time.Format(time.RFC1123Z))
	}
	labels := map[string]string{}
	for k, v := range p.Labels {
		labels[k] = k + "=" + v
	}
	d.multiline(0, "Labels", labels)
	annotations := map[string]string{}
	for k, v := range p.Annotations {
		switch k {
		case "berth.io/source", "berth.io/origin", "berth.io/rejected-update": // lines of their own
		default:
			annotations[k] = k + ": " + v
		}
	}
	d.multiline(0, "Annotations", annotations)
	if p.DeletionTimestamp != nil {
		d.line(0, "Status:\tTerminating (since %s)", p.DeletionTimestamp.Time.Format(time.RFC1123Z))
	} else {
		d.line(0, "Status:\t%s", p.Status.Phase)
	}
	if p.Status.Reason != "" {
		d.line(0, "Reason:\t%s", p.Status.Reason)
	}
	if p.Status.Message != "" {
		d.line(0, "Message:\t%s", p.Status.Message)
	}
	d.line(0, "IP:\t%s", p.Status.PodIP)
	if len(p.Status.PodIPs) == 0 {
		d.line(0, "IPs:\t<none>")
	} else {
		d.line(0, "IPs:")
		for _, ip := range p.Status.PodIPs {
			d.line(1, "IP:\t%s", ip.IP)
		}
	}
	if v := p.Annotations["berth.io/source"]; v != "" {
		d.line(0, "Source:\t%s", v)
	}
	if v := p.Annotations["berth.io/origin"]; v != "" {
		d.line(0, "Origin:\t%s", v)
	}
	if v := p.Annotations["berth.io/rejected-update"]; v != "" {
		d.line(0, "Rejected update:\t%s", v)
	}
	if len(p.Spec.InitContainers) > 0 {
		d.line(0, "Init Containers:")
		d.containers(p.Spec.InitContainers, p.Status.InitContainerStatuses)
	}
	d.line(0, "Containers:")
	d.containers(p.Spec.Containers, p.Status.ContainerStatuses)
	if len(p.Status.Conditions) > 0 {
		d.line(0, "Conditions:")
		d.line(1, "Type\tStatus")
		for _, c := range p.Status.Conditions {
			d.line(1, "%s \t%s ", c.Type, c.Status)
		}
	}
	d.volumes(p.Spec.Volumes)
	if p.Status.QOSClass != "" {
		d.line(0, "QoS Class:\t%s", p.Status.QOSClass)
	}
	d.events(evs, now)
	return d.tw.Flush()
}

// multiline prints "Key:\tfirst" then the other values (sorted by map key)
// aligned under it, or <none>.
func (d writer) multiline(level int, key string, vals map[string]string) {
	if len(vals) == 0 {
		d.line(level, "%s:\t<none>", key)
		return
	}
	for i, k := range slices.Sorted(maps.Keys(vals)) {
		if i == 0 {
			d.line(level, "%s:\t%s", key, vals[k])
		} else {
			d.line(level, "\t%s", vals[k])
		}
	}
}

func (d writer) containers(ctrs []v1.Container, statuses []v1.ContainerStatus) {
	for i := range ctrs {
		ct := &ctrs[i]
		var st *v1.ContainerStatus
		for j := range statuses {
			if statuses[j].Name == ct.Name {
				st = &statuses[j]
			}
		}
		d.line(1, "%s:", ct.Name)
		if st != nil && st.ContainerID != "" {
			d.line(2, "Container ID:\t%s", st.ContainerID)
		}
		d.line(2, "Image:\t%s", ct.Image)
		if st != nil && st.ImageID != "" {
			d.line(2, "Image ID:\t%s", st.ImageID)
		}
		d.ports(ct.Ports)
		for _, cmd := range []struct {
			key  string
			args []string
		}{{"Command", ct.Command}, {"Args", ct.Args}} {
			if len(cmd.args) > 0 {
				d.line(2, "%s:", cmd.key)
				for _, a := range cmd.args {
					d.line(3, "%s", a)
				}
			}
		}
		if st != nil {
			d.state("State", st.State)
			if st.LastTerminationState.Terminated != nil {
				d.state("Last State", st.LastTerminationState)
			}
			d.line(2, "Ready:\t%s", boolWord(st.Ready))
			d.line(2, "Restart Count:\t%d", st.RestartCount)
		} else {
			d.line(2, "State:\tWaiting")
			d.line(2, "Ready:\tFalse")
			d.line(2, "Restart Count:\t0")
		}
		for _, r := range []struct {
			key  string
			list v1.ResourceList
		}{{"Limits", ct.Resources.Limits}, {"Requests", ct.Resources.Requests}} {
			if len(r.list) == 0 {
				continue
			}
			d.line(2, "%s:", r.key)
			names := make([]string, 0, len(r.list))
			for n := range r.list {
				names = append(names, string(n))
			}
			sort.Strings(names)
			for _, n := range names {
				q := r.list[v1.ResourceName(n)]
				d.line(3, "%s:\t%s", n, q.String())
			}
		}
		for _, pr := range []struct {
			key   string
			probe *v1.Probe
		}{{"Liveness", ct.LivenessProbe}, {"Readiness", ct.ReadinessProbe}, {"Startup", ct.StartupProbe}} {
			if pr.probe != nil {
				d.line(2, "%s:\t%s", pr.key, probeSummary(pr.probe))
			}
		}
		d.env(ct)
		if len(ct.VolumeMounts) == 0 {
			d.line(2, "Mounts:\t<none>")
		} else {
			d.line(2, "Mounts:")
			for _, m := range ct.VolumeMounts {
				mode := "rw"
				if m.ReadOnly {
					mode = "ro"
				}
				if m.SubPath != "" {
					mode += fmt.Sprintf(",path=%q", m.SubPath)
				}
				d.line(3, "%s from %s (%s)", m.MountPath, m.Name, mode)
			}
		}
	}
}

func boolWord(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func (d writer) ports(ports []v1.ContainerPort) {
	if len(ports) == 0 {
		d.line(2, "Port:\t<none>")
		d.line(2, "Host Port:\t<none>")
		return
	}
	var cps, hps []string
	for _, p := range ports {
		proto := p.Protocol
		if proto == "" {
			proto = v1.ProtocolTCP
		}
		cps = append(cps, fmt.Sprintf("%d/%s", p.ContainerPort, proto))
		hps = append(hps, fmt.Sprintf("%d/%s", p.HostPort, proto))
	}
	plural := ""
	if len(ports) > 1 {
		plural = "s"
	}
	d.line(2, "Port%s:\t%s", plural, strings.Join(cps, ", "))
	d.line(2, "Host Port%s:\t%s", plural, strings.Join(hps, ", "))
}

// state prints a container state as kubectl does: the state, then its
// reason, message and times one level deeper.
func (d writer) state(key string, s v1.ContainerState) {
	switch {
	case s.Running != nil:
		d.line(2, "%s:\tRunning", key)
		d.line(3, "Started:\t%s", s.Running.StartedAt.Time.Format(time.RFC1123Z))
	case s.Terminated != nil:
		t := s.Terminated
		d.line(2, "%s:\tTerminated", key)
		if t.Reason != "" {
			d.line(3, "Reason:\t%s", t.Reason)
		}
		if t.Message != "" {
			d.line(3, "Message:\t%s", t.Message)
		}
		d.line(3, "Exit Code:\t%d", t.ExitCode)
		if t.Signal > 0 {
			d.line(3, "Signal:\t%d", t.Signal)
		}
		d.line(3, "Started:\t%s", t.StartedAt.Time.Format(time.RFC1123Z))
		d.line(3, "Finished:\t%s", t.FinishedAt.Time.Format(time.RFC1123Z))
	default:
		d.line(2, "%s:\tWaiting", key)
		if s.Waiting != nil && s.Waiting.Reason != "" {
			d.line(3, "Reason:\t%s", s.Waiting.Reason)
		}
		if s.Waiting != nil && s.Waiting.Message != "" {
			d.line(3, "Message:\t%s", s.Waiting.Message)
		}
	}
}

// probeSummary is kubectl's one-line probe summary, e.g.
// "http-get http://:8080/healthz delay=0s timeout=1s period=10s #success=1 #failure=3".
func probeSummary(p *v1.Probe) string {
	attrs := fmt.Sprintf("delay=%ds timeout=%ds period=%ds #success=%d #failure=%d",
		p.InitialDelaySeconds, p.TimeoutSeconds, p.PeriodSeconds, p.SuccessThreshold, p.FailureThreshold)
	switch {
	case p.Exec != nil:
		return fmt.Sprintf("exec %v %s", p.Exec.Command, attrs)
	case p.HTTPGet != nil:
		u := url.URL{Scheme: strings.ToLower(string(p.HTTPGet.Scheme)), Host: p.HTTPGet.Host, Path: p.HTTPGet.Path}
		if port := p.HTTPGet.Port.String(); port != "" {
			u.Host = net.JoinHostPort(p.HTTPGet.Host, port)
		}
		return fmt.Sprintf("http-get %s %s", u.String(), attrs)
	case p.TCPSocket != nil:
		return fmt.Sprintf("tcp-socket %s:%s %s", p.TCPSocket.Host, p.TCPSocket.Port.String(), attrs)
	case p.GRPC != nil:
		svc := ""
		if p.GRPC.Service != nil {
			svc = *p.GRPC.Service
		}
		return fmt.Sprintf("grpc <pod>:%d %s %s", p.GRPC.Port, svc, attrs)
	}
	return "unknown " + attrs
}

func (d writer) env(ct *v1.Container) {
	if len(ct.EnvFrom) > 0 {
		d.line(2, "Environment Variables from:")
		for _, from := range ct.EnvFrom {
			switch {
			case from.ConfigMapRef != nil:
				d.line(3, "%s\tConfigMap\tOptional: %t", from.ConfigMapRef.Name, from.ConfigMapRef.Optional != nil && *from.ConfigMapRef.Optional)
			case from.SecretRef != nil:
				d.line(3, "%s\tSecret\tOptional: %t", from.SecretRef.Name, from.SecretRef.Optional != nil && *from.SecretRef.Optional)
			}
		}
	}
	if len(ct.Env) == 0 {
		d.line(2, "Environment:\t<none>")
		return
	}
	d.line(2, "Environment:")
	for _, e := range ct.Env {
		switch src := e.ValueFrom; {
		case src == nil:
			d.line(3, "%s:\t%s", e.Name, e.Value)
		case src.FieldRef != nil:
			d.line(3, "%s:\t(%s:%s)", e.Name, src.FieldRef.APIVersion, src.FieldRef.FieldPath)
		case src.ResourceFieldRef != nil:
			d.line(3, "%s:\t%s (%s)", e.Name, src.ResourceFieldRef.Resource, src.ResourceFieldRef.ContainerName)
		case src.SecretKeyRef != nil:
			d.line(3, "%s:\t<set to the key '%s' in secret '%s'>", e.Name, src.SecretKeyRef.Key, src.SecretKeyRef.Name)
		case src.ConfigMapKeyRef != nil:
			d.line(3, "%s:\t<set to the key '%s' of config map '%s'>", e.Name, src.ConfigMapKeyRef.Key, src.ConfigMapKeyRef.Name)
		case src.FileKeyRef != nil:
			d.line(3, "%s:\t<set to the key '%s' in the env file '%s' of volume '%s'>", e.Name, src.FileKeyRef.Key, src.FileKeyRef.Path, src.FileKeyRef.VolumeName)
		default:
			d.line(3, "%s:\t<unknown source>", e.Name)
		}
	}
}

func (d writer) volumes(vols []v1.Volume) {
	if len(vols) == 0 {
		d.line(0, "Volumes:\t<none>")
		return
	}
	d.line(0, "Volumes:")
	for _, v := range vols {
		d.line(1, "%s:", v.Name)
		switch s := v.VolumeSource; {
		case s.EmptyDir != nil:
			d.line(2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)")
			d.line(2, "Medium:\t%s", s.EmptyDir.Medium)
			if s.EmptyDir.SizeLimit != nil {
				d.line(2, "SizeLimit:\t%s", s.EmptyDir.SizeLimit.String())
			} else {
				d.line(2, "SizeLimit:\t<unset>")
			}
		case s.HostPath != nil:
			typ := ""
			if s.HostPath.Type != nil {
				typ = string(*s.HostPath.Type)
			}
			d.line(2, "Type:\tHostPath (bare host directory volume)")
			d.line(2, "Path:\t%s", s.HostPath.Path)
			d.line(2, "HostPathType:\t%s", typ)
		case s.ConfigMap != nil:
			d.line(2, "Type:\tConfigMap (a volume populated by a ConfigMap)")
			d.line(2, "Name:\t%s", s.ConfigMap.Name)
		case s.Secret != nil:
			d.line(2, "Type:\tSecret (a volume populated by a Secret)")
			d.line(2, "SecretName:\t%s", s.Secret.SecretName)
		default:
			d.line(2, "Type:\t<unknown>")
		}
	}
}
