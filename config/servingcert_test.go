package config

import (
	"strings"
	"testing"
)

func TestServerTLSSelfSigned(t *testing.T) {
	c, err := Load(flags(t, "--node-name", "n1", "--root-dir", "/srv/berth"))
	if err != nil {
		t.Fatal(err)
	}
	if cert, key := c.ServingCertFiles(); c.TLSSelfSigned || cert != "" || key != "" {
		t.Errorf("default: self_signed %v, serving files %q %q; want plain http", c.TLSSelfSigned, cert, key)
	}

	t.Setenv("BERTH_SERVER_TLS_SELF_SIGNED", "true")
	c, err = Load(flags(t, "--node-name", "n1", "--root-dir", "/srv/berth"))
	if err != nil {
		t.Fatal(err)
	}
	if cert, key := c.ServingCertFiles(); !c.TLSSelfSigned || cert != "/srv/berth/pki/berth-serving.crt" || key != "/srv/berth/pki/berth-serving.key" {
		t.Errorf("self_signed: %v, serving files %q %q", c.TLSSelfSigned, cert, key)
	}
	if c.ServingCertDir() != "/srv/berth/pki" {
		t.Errorf("ServingCertDir = %q", c.ServingCertDir())
	}

	t.Setenv("BERTH_SERVER_TLS_CERT_FILE", "/etc/berth/tls.crt")
	t.Setenv("BERTH_SERVER_TLS_KEY_FILE", "/etc/berth/tls.key")
	_, err = Load(flags(t, "--node-name", "n1"))
	want := "server.tls.self_signed: true and server.tls.cert_file/key_file exclude each other: berth either generates its certificate or serves the one given; drop one"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("self_signed with cert_file: %v\nwant %q", err, want)
	}

	t.Setenv("BERTH_SERVER_TLS_SELF_SIGNED", "false")
	c, err = Load(flags(t, "--node-name", "n1"))
	if err != nil {
		t.Fatal(err)
	}
	if cert, key := c.ServingCertFiles(); cert != "/etc/berth/tls.crt" || key != "/etc/berth/tls.key" {
		t.Errorf("cert_file: serving files %q %q", cert, key)
	}

	t.Setenv("BERTH_SERVER_TLS_SELF_SIGNED", "maybe")
	if _, err := Load(flags(t, "--node-name", "n1")); err == nil || !strings.Contains(err.Error(), `server.tls.self_signed: "maybe" is not a boolean`) {
		t.Errorf("self_signed maybe: %v", err)
	}
}
