package servingcert

import (
	"errors"
	"fmt"
	"net"
	"testing"
)

func TestHosts(t *testing.T) {
	ifaces := func() ([]net.Addr, error) {
		var addrs []net.Addr
		for _, cidr := range []string{"127.0.0.1/8", "::1/128", "192.168.1.20/24", "fe80::1/64", "2001:db8::7/64", "172.17.0.1/16"} {
			ip, n, _ := net.ParseCIDR(cidr)
			addrs = append(addrs, &net.IPNet{IP: ip, Mask: n.Mask})
		}
		return addrs, nil
	}
	noIfaces := func() ([]net.Addr, error) { return nil, errors.New("must not be asked") }
	for _, tc := range []struct {
		node, address string
		ifaces        func() ([]net.Addr, error)
		want          string
	}{
		{"node-a", "127.0.0.1", noIfaces, "[localhost node-a] [127.0.0.1 ::1]"},
		{"Node-A", "10.0.0.5", noIfaces, "[localhost node-a] [127.0.0.1 ::1 10.0.0.5]"},
		{"node-a", "localhost", noIfaces, "[localhost node-a] [127.0.0.1 ::1]"},
		{"10.1.1.1", "127.0.0.1", noIfaces, "[localhost] [127.0.0.1 ::1 10.1.1.1]"},
		{"node-a", "0.0.0.0", ifaces, "[localhost node-a] [127.0.0.1 ::1 192.168.1.20 2001:db8::7 172.17.0.1]"},
		{"node-a", "::", ifaces, "[localhost node-a] [127.0.0.1 ::1 192.168.1.20 2001:db8::7 172.17.0.1]"},
		{"node-a", "", ifaces, "[localhost node-a] [127.0.0.1 ::1 192.168.1.20 2001:db8::7 172.17.0.1]"},
	} {
		s, err := Hosts(tc.node, tc.address, tc.ifaces)
		if got := fmt.Sprint(s.DNSNames, " ", s.IPs); err != nil || got != tc.want {
			t.Errorf("Hosts(%q, %q) = %s, %v; want %s", tc.node, tc.address, got, err, tc.want)
		}
	}
	_, err := Hosts("node-a", "0.0.0.0", func() ([]net.Addr, error) { return nil, errors.New("boom") })
	if err == nil || err.Error() != `the host's addresses (server.address "0.0.0.0" listens on all): boom` {
		t.Errorf("interface error: %v", err)
	}
}
