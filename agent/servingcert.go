package agent

import (
	"fmt"
	"log/slog"
	"net"

	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/config"
	"github.com/berth-dev/berth/servingcert"
)

// servingCert returns the pair the API serves https with ("" for http):
// server.tls.cert_file and key_file, or with server.tls.self_signed the
// pair under root_dir/pki, written anew when missing or unfit.
func servingCert(cfg *config.Config, clk clock.PassiveClock, log *slog.Logger) (cert, key string, err error) {
	if !cfg.TLSSelfSigned {
		cert, key = cfg.ServingCertFiles()
		return cert, key, nil
	}
	sans, err := servingcert.Hosts(cfg.NodeName, cfg.ServerAddress, net.InterfaceAddrs)
	if err != nil {
		return "", "", fmt.Errorf("server.tls.self_signed: %w", err)
	}
	res, err := servingcert.Ensure(servingcert.Options{Dir: cfg.ServingCertDir(), Name: cfg.NodeName, SANs: sans, Clock: clk})
	if err != nil {
		return "", "", fmt.Errorf("server.tls.self_signed: %w", err)
	}
	if res.Generated != "" {
		log.Info("generated a self-signed serving certificate; clients trust it through berth kubeconfig",
			"cert", res.CertFile, "why", res.Generated, "dns", sans.DNSNames, "ips", sans.IPs, "not_after", res.NotAfter)
	} else {
		log.Debug("serving the self-signed certificate", "cert", res.CertFile, "not_after", res.NotAfter)
	}
	return res.CertFile, res.KeyFile, nil
}
