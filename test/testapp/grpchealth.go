package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// The grpc.health.v1 serving statuses (health.proto).
var servingStatus = map[string]byte{"UNKNOWN": 0, "SERVING": 1, "NOT_SERVING": 2, "SERVICE_UNKNOWN": 3}

// grpcHealth serves grpc.health.v1.Health/Check on port (gRPC over
// cleartext HTTP/2, written by hand: grpc-go would double testapp's size),
// the overall service "" SERVING and each SERVICE=STATUS of initial as
// given; a service never set answers NOT_FOUND, as grpc-go's server does.
// HTTP on $PORT (default 8080) sets a status: GET
// /grpc-health?service=S&status=NOT_SERVING. Blocks until SIGTERM/SIGINT.
func grpcHealth(port string, initial []string) {
	var mu sync.Mutex
	statuses := map[string]byte{"": servingStatus["SERVING"]}
	set := func(service, status string) error {
		v, ok := servingStatus[status]
		if !ok {
			return fmt.Errorf("unknown status %q", status)
		}
		mu.Lock()
		statuses[service] = v
		mu.Unlock()
		return nil
	}
	for _, kv := range initial {
		service, status, _ := strings.Cut(kv, "=")
		if err := set(service, status); err != nil {
			fmt.Fprintln(os.Stderr, "grpc-health:", err)
			os.Exit(2)
		}
	}
	grpcMux := http.NewServeMux()
	grpcMux.HandleFunc("/grpc.health.v1.Health/Check", func(w http.ResponseWriter, r *http.Request) {
		service, err := readCheckRequest(r.Body)
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status, Grpc-Message")
		if err != nil {
			w.Header().Set("Grpc-Status", "13") // INTERNAL
			w.Header().Set("Grpc-Message", err.Error())
			return
		}
		mu.Lock()
		st, ok := statuses[service]
		mu.Unlock()
		if !ok {
			w.Header().Set("Grpc-Status", "5") // NOT_FOUND
			w.Header().Set("Grpc-Message", "unknown service")
			return
		}
		// A HealthCheckResponse: field 1 (status), varint, in one frame.
		_, _ = w.Write([]byte{0, 0, 0, 0, 2, 0x08, st})
		w.Header().Set("Grpc-Status", "0")
	})
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	grpcSrv := &http.Server{Addr: ":" + port, Handler: grpcMux, Protocols: &protocols, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := grpcSrv.ListenAndServe(); err != http.ErrServerClosed {
			fmt.Fprintln(os.Stderr, "grpc-health:", err)
			os.Exit(1)
		}
	}()

	httpPort := os.Getenv("PORT")
	if httpPort == "" {
		httpPort = "8080"
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/grpc-health", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if err := set(q.Get("service"), q.Get("status")); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, q.Get("status"))
	})
	srv := &http.Server{Addr: ":" + httpPort, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.ListenAndServe() }()
	fmt.Printf("grpc-health: gRPC on %s, control on %s\n", port, httpPort)
	waitSignal()
	srv.Close()
	grpcSrv.Close()
}

// readCheckRequest reads one length-prefixed, uncompressed gRPC message
// holding a HealthCheckRequest and returns its service (field 1).
func readCheckRequest(body io.Reader) (string, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(body, hdr[:]); err != nil {
		return "", fmt.Errorf("reading the message header: %w", err)
	}
	if hdr[0] != 0 {
		return "", fmt.Errorf("compressed messages are not supported")
	}
	msg := make([]byte, binary.BigEndian.Uint32(hdr[1:]))
	if len(msg) > 1<<16 {
		return "", fmt.Errorf("message of %d bytes", len(msg))
	}
	if _, err := io.ReadFull(body, msg); err != nil {
		return "", fmt.Errorf("reading the message: %w", err)
	}
	service := ""
	for len(msg) > 0 {
		tag, n := binary.Uvarint(msg)
		if n <= 0 || tag&7 != 2 {
			return "", fmt.Errorf("unexpected field tag %d", tag)
		}
		size, m := binary.Uvarint(msg[n:])
		if m <= 0 || uint64(len(msg)-n-m) < size {
			return "", fmt.Errorf("truncated field %d", tag>>3)
		}
		if tag>>3 == 1 {
			service = string(msg[n+m : n+m+int(size)])
		}
		msg = msg[n+m+int(size):]
	}
	return service, nil
}
