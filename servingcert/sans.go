package servingcert

import (
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"strings"
)

// SANs are the DNS names and IP addresses a certificate names.
type SANs struct {
	DNSNames []string
	IPs      []net.IP
}

// Hosts are the SANs of the API of node listening on address: loopback
// (127.0.0.1, ::1, localhost), the node name, and the address, or for a
// wildcard address ("", 0.0.0.0, ::) every address interfaceAddrs gives
// (net.InterfaceAddrs) but link-local ones, which a URL cannot use
// without a zone and which come and go with containers' interfaces.
func Hosts(node, address string, interfaceAddrs func() ([]net.Addr, error)) (SANs, error) {
	var s SANs
	s.add("127.0.0.1")
	s.add("::1")
	s.add("localhost")
	s.add(node)
	ip := net.ParseIP(address)
	if address != "" && (ip == nil || !ip.IsUnspecified()) {
		s.add(address)
		return s, nil
	}
	addrs, err := interfaceAddrs()
	if err != nil {
		return SANs{}, fmt.Errorf("the host's addresses (server.address %q listens on all): %w", address, err)
	}
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.IsLinkLocalUnicast() || n.IP.IsUnspecified() {
			continue
		}
		s.add(n.IP.String())
	}
	return s, nil
}

// add adds an IP address or a DNS name once; empty adds nothing.
func (s *SANs) add(host string) {
	if ip := net.ParseIP(host); ip != nil {
		if !slices.ContainsFunc(s.IPs, ip.Equal) {
			s.IPs = append(s.IPs, ip)
		}
		return
	}
	host = strings.ToLower(host)
	if host != "" && !slices.Contains(s.DNSNames, host) {
		s.DNSNames = append(s.DNSNames, host)
	}
}

// missing is the first of s that c does not name ("" if c covers s).
func (s SANs) missing(c *x509.Certificate) string {
	for _, ip := range s.IPs {
		if !slices.ContainsFunc(c.IPAddresses, ip.Equal) {
			return ip.String()
		}
	}
	for _, name := range s.DNSNames {
		if !slices.ContainsFunc(c.DNSNames, func(n string) bool { return strings.EqualFold(n, name) }) {
			return name
		}
	}
	return ""
}
