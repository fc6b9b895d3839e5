package server

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// errForeignHost is the 403 answer of a server without admin tokens to a
// request addressed to another name.
const errForeignHost = "forbidden: Host %q is not a loopback name: without server.token_file berth answers only " +
	"requests to localhost, a loopback address or server.address (a page whose name is rebound to 127.0.0.1 " +
	"must not read the API through a browser); set server.token_file to serve other names"

// loopbackHost reports whether host, a request's Host header with or
// without a port, names this machine's loopback: localhost, a loopback IP
// or address (server.address). An empty Host (HTTP/1.0 without one; no
// browser sends that) passes: it names nothing a page could rebind.
func loopbackHost(host, address string) bool {
	if host == "" {
		return true
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		name = host[1 : len(host)-1]
	}
	name = strings.TrimSuffix(name, ".")
	if strings.EqualFold(name, "localhost") || (address != "" && strings.EqualFold(name, address)) {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// hostGuard refuses, on a server without admin tokens, the requests whose
// Host is not a loopback name, against DNS rebinding: such a server is
// open to whoever reaches its loopback port, and a browser reaches it for
// any page whose name resolves to 127.0.0.1. With admin tokens every
// route but health and metrics needs a token no page has, so any name is
// served (remote clients use the node's names).
func (s *Server) hostGuard(w http.ResponseWriter, r *http.Request) bool {
	if len(s.opts.Tokens) > 0 || loopbackHost(r.Host, s.opts.Address) {
		return true
	}
	http.Error(w, fmt.Sprintf(errForeignHost, r.Host), http.StatusForbidden)
	return false
}
