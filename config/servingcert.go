package config

import (
	"path/filepath"

	"github.com/berth-dev/berth/servingcert"
)

// ServingCertDir is where berth keeps its self-signed serving certificate
// (server.tls.self_signed): root_dir/pki.
func (c *Config) ServingCertDir() string { return filepath.Join(c.RootDir, "pki") }

// ServingCertFiles are the certificate and key the API serves https with:
// server.tls.cert_file and key_file, else with server.tls.self_signed the
// pair under ServingCertDir (which the agent generates when it starts);
// both "" when the API serves plain http.
func (c *Config) ServingCertFiles() (cert, key string) {
	switch {
	case c.TLSCertFile != "":
		return c.TLSCertFile, c.TLSKeyFile
	case c.TLSSelfSigned:
		return servingcert.Files(c.ServingCertDir())
	}
	return "", ""
}
