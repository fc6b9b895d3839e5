package podconfig

import (
	"bufio"
	"bytes"
	"net"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// hostResolvConf is the resolv.conf whose servers, search list and options
// dnsConfig is merged into (berth runs on the host network).
const hostResolvConf = "/etc/resolv.conf"

// Limits of resolv.conf the kubelet enforces.
const (
	maxNameservers = 3
	maxSearches    = 32
)

// dnsSettings are the sandbox's nameservers, search domains and options as
// the kubelet's DNS configurer: None takes dnsConfig alone; every other
// policy (berth has no cluster DNS, so ClusterFirst falls back to Default, as
// a kubelet without --cluster-dns) starts from the host's resolv.conf and
// merges dnsConfig into it. Without dnsConfig it returns nothing, and the
// engine copies the host's file itself.
func dnsSettings(pod *v1.Pod, resolvConf func() []byte) (servers, searches, options []string) {
	dc := pod.Spec.DNSConfig
	if pod.Spec.DNSPolicy != v1.DNSNone {
		if dc == nil {
			return nil, nil, nil
		}
		servers, searches, options = parseResolvConf(resolvConf(), !pod.Spec.HostNetwork)
	}
	if dc == nil {
		return nil, nil, nil
	}
	for _, s := range dc.Nameservers {
		if !slices.Contains(servers, s) {
			servers = append(servers, s)
		}
	}
	for _, s := range dc.Searches {
		if !slices.Contains(searches, s) {
			searches = append(searches, s)
		}
	}
	for _, o := range dc.Options {
		opt := o.Name
		if o.Value != nil {
			opt += ":" + *o.Value
		}
		// A pod's option replaces the host's of the same name.
		options = slices.DeleteFunc(options, func(h string) bool { n, _, _ := strings.Cut(h, ":"); return n == o.Name })
		options = append(options, opt)
	}
	if len(servers) > maxNameservers {
		servers = servers[:maxNameservers]
	}
	if len(searches) > maxSearches {
		searches = searches[:maxSearches]
	}
	return servers, searches, options
}

// parseResolvConf parses nameserver, search and options lines; loopback
// servers (a local stub resolver) are dropped when the pod has its own
// network namespace, where they would not answer.
func parseResolvConf(conf []byte, dropLoopback bool) (servers, searches, options []string) {
	sc := bufio.NewScanner(bytes.NewReader(conf))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") || strings.HasPrefix(fields[0], ";") {
			continue
		}
		switch fields[0] {
		case "nameserver":
			if ip := net.ParseIP(fields[1]); ip != nil && !(dropLoopback && ip.IsLoopback()) {
				servers = append(servers, fields[1])
			}
		case "search", "domain":
			searches = fields[1:]
		case "options":
			options = append(options, fields[1:]...)
		}
	}
	return servers, searches, options
}

// hostResolvConf reads the host's resolv.conf (nil when unreadable: the
// pod then gets dnsConfig alone).
func (b *Builder) hostResolvConf() []byte {
	conf, err := b.host.ReadFile(hostResolvConf)
	if err != nil {
		return nil
	}
	return conf
}
