package server

import "net/http"

// RegisterNodeLogs serves h, the node's log directory (kubeapi.NodeLogs
// of server.node_logs_dir), at GET /logs/ as the kubelet does, with the
// admin scope: push tokens and, on a server with admin tokens, anonymous
// requests are refused.
func RegisterNodeLogs(s *Server, h http.Handler) {
	s.Handle("GET /logs/{path...}", h)
}
