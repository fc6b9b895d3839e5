package config

import (
	"strings"
	"testing"
)

// TestServerLimits: the API's connection, watch and mutating request caps
// default to 4096 connections, 1000 watches and 100 per token, 20
// mutating requests and 10 per token; each is checked, naming its key.
func TestServerLimits(t *testing.T) {
	c, err := Load(flags(t, "--node-name", "n1"))
	if err != nil || c.MaxConnections != 4096 || c.MaxWatches != 1000 || c.MaxWatchesPerToken != 100 ||
		c.MaxMutatingRequests != 20 || c.MaxMutatingRequestsPerToken != 10 {
		t.Fatalf("defaults: %d %d %d %d %d %v", c.MaxConnections, c.MaxWatches, c.MaxWatchesPerToken,
			c.MaxMutatingRequests, c.MaxMutatingRequestsPerToken, err)
	}
	t.Setenv("BERTH_SERVER_MAX_MUTATING_REQUESTS", "4")
	t.Setenv("BERTH_SERVER_MAX_MUTATING_REQUESTS_PER_TOKEN", "2")
	if c, err = Load(flags(t, "--node-name", "n1")); err != nil || c.MaxMutatingRequests != 4 || c.MaxMutatingRequestsPerToken != 2 {
		t.Fatalf("mutating caps from the environment: %d %d %v", c.MaxMutatingRequests, c.MaxMutatingRequestsPerToken, err)
	}
	t.Setenv("BERTH_SERVER_MAX_WATCHES", "20")
	t.Setenv("BERTH_SERVER_MAX_WATCHES_PER_TOKEN", "5")
	if c, err = Load(flags(t, "--node-name", "n1")); err != nil || c.MaxWatches != 20 || c.MaxWatchesPerToken != 5 {
		t.Fatalf("from the environment: %d %d %v", c.MaxWatches, c.MaxWatchesPerToken, err)
	}
	for _, tc := range []struct{ env, value, want string }{
		{"BERTH_SERVER_MAX_WATCHES_PER_TOKEN", "21", "server.max_watches_per_token: 21 is above server.max_watches 20"},
		{"BERTH_SERVER_MAX_WATCHES", "0", "server.max_watches: 0 is outside"},
		{"BERTH_SERVER_MAX_CONNECTIONS", "8", "server.max_connections: 8 is outside 16.."},
		{"BERTH_SERVER_MAX_MUTATING_REQUESTS_PER_TOKEN", "5", "server.max_mutating_requests_per_token: 5 is above server.max_mutating_requests 4"},
		{"BERTH_SERVER_MAX_MUTATING_REQUESTS", "0", "server.max_mutating_requests: 0 is outside"},
		{"BERTH_SERVER_MAX_CONNECTIONS", "many", `server.max_connections: "many" is not an integer`},
	} {
		t.Run(tc.env+"="+tc.value, func(t *testing.T) {
			t.Setenv(tc.env, tc.value)
			if _, err := Load(flags(t, "--node-name", "n1")); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
