package server

import "net/http"

// ErrAnonymousNodeLogs is the 403 answer of the node's logs, without an
// admin token, on a server that has none (server.token_file unset).
const ErrAnonymousNodeLogs = "node logs need server.token_file: berth serves server.node_logs_dir " +
	"(/logs/, nodes/<node>/proxy/logs) to its admin tokens only, never without a token"

// RegisterNodeLogs serves h, the node's log directory (nodelogs.Handler
// of server.node_logs_dir), at GET /logs/ as the kubelet does, to admin
// tokens only: push tokens are refused, and so are requests without a
// token, even on a server without admin tokens (root-only files of the
// directory must not reach every local user).
func RegisterNodeLogs(s *Server, h http.Handler) {
	s.handle("GET /logs/{path...}", accessNodeLogs, h)
}
