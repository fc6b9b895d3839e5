package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/berth-dev/berth/config"
)

// The client commands' environment variables and defaults.
const (
	envServer     = "BERTH_SERVER"
	envTokenFile  = "BERTH_TOKEN_FILE"
	envConfig     = "BERTH_CONFIG"
	defaultServer = "http://127.0.0.1:10350"
)

// defaultConfigFile is the agent's configuration read when neither
// --config nor $BERTH_CONFIG names one (a variable for tests).
var defaultConfigFile = "/etc/berth/config.yaml"

// locator finds the local berth for a client command: each of the server
// URL and the token file comes from its flag, else its environment
// variable, else the agent's configuration (loaded by config.Load, as
// berth run loads it, from --config, $BERTH_CONFIG or /etc/berth/config.yaml
// if it exists), else the default. The agent's token file is used only for
// the agent's own address, never sent to a server named otherwise. Fields
// are the flags until locate resolves them in place; set server or
// tokenFile directly to mean the flag.
type locator struct {
	server, tokenFile, configFile string

	// Where server and tokenFile came from, for messages: "--server",
	// "BERTH_SERVER", "server.address of /etc/berth/config.yaml", ...
	serverFrom, tokenFrom string
	// caFile verifies an https server: the agent's server.tls.cert_file,
	// or its self-signed certificate (server.tls.self_signed) under
	// root_dir/pki; caFrom says which, for messages.
	caFile, caFrom string
	// cfg is the agent's configuration when it was loaded, and cfgFile its
	// file ("" without one).
	cfg     *config.Config
	cfgFile string

	done bool
	err  error
}

func (l *locator) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&l.server, "server", "", "berth API URL (default: $"+envServer+", else server.address and server.port of the agent's config, else "+defaultServer+")")
	fs.StringVar(&l.tokenFile, "token-file", "", "file holding the API bearer token, its first line (default: $"+envTokenFile+", else server.token_file of the agent's config)")
	fs.StringVar(&l.configFile, "config", "", "the agent's configuration file, read for the server and token (default: $"+envConfig+", else "+defaultConfigFile+" if it exists)")
}

// locate resolves the server and token file once; later calls return the
// first outcome.
func (l *locator) locate() error {
	if l.done {
		return l.err
	}
	l.done = true
	l.err = l.resolve()
	return l.err
}

func (l *locator) resolve() error {
	l.serverFrom, l.tokenFrom = "--server", "--token-file"
	if l.server == "" {
		l.server, l.serverFrom = os.Getenv(envServer), envServer
	}
	if l.tokenFile == "" {
		l.tokenFile, l.tokenFrom = os.Getenv(envTokenFile), envTokenFile
	}
	needConfig := l.server == "" || l.tokenFile == "" || l.configFile != ""
	if needConfig {
		if err := l.loadConfig(); err != nil {
			return err
		}
	}
	if l.cfg != nil {
		where := "the agent's configuration (its defaults and BERTH_ variables)"
		if l.cfgFile != "" {
			where = "the agent's configuration " + l.cfgFile
		}
		certFile, _ := l.cfg.ServingCertFiles()
		tls := certFile != ""
		own := configURL(l.cfg.ServerAddress, l.cfg.ServerPort, tls)
		switch {
		case l.server != "":
		case l.cfgFile == "" && own == defaultServer:
			l.server, l.serverFrom = own, "the default"
		default:
			l.server, l.serverFrom = own, "server.address and server.port of "+where
		}
		// The agent's token goes to the agent only, never to another
		// server named by --server or $BERTH_SERVER.
		if l.tokenFile == "" && l.cfg.TokenFile != "" && l.server == own {
			l.tokenFile, l.tokenFrom = l.cfg.TokenFile, "server.token_file of "+where
		}
		if tls {
			l.caFile, l.caFrom = certFile, "server.tls.cert_file of "+where
			if l.cfg.TLSSelfSigned {
				l.caFrom = "the certificate of server.tls.self_signed under root_dir/pki, " + where
			}
		}
	}
	if l.server == "" {
		l.server, l.serverFrom = defaultServer, "the default"
	}
	if l.tokenFile == "" {
		l.tokenFrom = ""
	}
	return nil
}

// readCA reads the CA file verifying the located https server, naming
// where it came from: a self-signed certificate not written yet means an
// agent not started, one unreadable a client not run as root.
func (l *locator) readCA() ([]byte, error) {
	pem, err := os.ReadFile(l.caFile)
	if err == nil {
		return pem, nil
	}
	hint := ""
	if l.cfg != nil && l.cfg.TLSSelfSigned {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			hint = " (berth writes it when it starts: start the agent first)"
		case errors.Is(err, fs.ErrPermission):
			hint = " (root_dir/pki is its owner's alone, mode 0700: run this command as berth's user, root)"
		}
	}
	return nil, fmt.Errorf("the server's certificate (%s): %w%s", l.caFrom, err, hint)
}

// configFilePath is the agent's configuration file the client reads:
// --config, else $BERTH_CONFIG, else /etc/berth/config.yaml if it exists
// ("" if not). explicit reports the first two.
func (l *locator) configFilePath() (path string, explicit bool, err error) {
	if l.configFile != "" {
		return l.configFile, true, nil
	}
	if v := os.Getenv(envConfig); v != "" {
		return v, true, nil
	}
	if _, err := os.Stat(defaultConfigFile); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("the agent's configuration %s: %w (pass --config FILE, or --server and --token-file)", defaultConfigFile, err)
	}
	return defaultConfigFile, false, nil
}

// loadConfig loads the agent's configuration with config.Load, so that
// the client sees the keys and BERTH_ variables the agent sees.
func (l *locator) loadConfig() error {
	path, _, err := l.configFilePath()
	if err != nil {
		return err
	}
	fs := pflag.NewFlagSet("berth", pflag.ContinueOnError)
	config.BindFlags(fs)
	if path != "" {
		if err := fs.Set("config", path); err != nil {
			return err
		}
	}
	cfg, err := config.Load(fs)
	if err != nil {
		return fmt.Errorf("%w\n(the agent's configuration, read to find the server; pass --server and --token-file to skip it)", err)
	}
	for _, w := range cfg.Warnings { // a mistyped key may be why the server is not found
		fmt.Fprintln(os.Stderr, "berth: warning:", w)
	}
	l.cfg, l.cfgFile = cfg, path
	return nil
}

// configURL is the URL a local client reaches the agent at, listening on
// address:port: a wildcard address is reached on loopback.
func configURL(address string, port int, tls bool) string {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	switch ip := net.ParseIP(address); {
	case address == "":
		address = "127.0.0.1"
	case ip != nil && ip.IsUnspecified() && ip.To4() != nil:
		address = "127.0.0.1"
	case ip != nil && ip.IsUnspecified():
		address = "::1"
	}
	return scheme + "://" + net.JoinHostPort(address, strconv.Itoa(port))
}

// errUnauthorized is a 401 from the located server, worded with the way
// to give it a token.
func (l *locator) errUnauthorized() error {
	if l.tokenFile == "" {
		return fmt.Errorf("the server at %s wants a token (401 Unauthorized): pass --token-file FILE, set %s=FILE, "+
			"or name the agent's config (with server.token_file) by --config FILE or %s", l.server, envTokenFile, envConfig)
	}
	return fmt.Errorf("the server at %s refused the token in %s (from %s) (401 Unauthorized): "+
		"pass a token of its server.token_file by --token-file FILE or %s=FILE", l.server, l.tokenFile, l.tokenFrom, envTokenFile)
}

// errUnreachable is a failure to get an answer from the located server,
// naming where its URL came from unless the --server flag gave it.
func (l *locator) errUnreachable(err error) error {
	switch l.serverFrom {
	case "--server":
		return fmt.Errorf("%w at %s: %v", errUnreachable, l.server, err)
	case "the default":
		return fmt.Errorf("%w at %s (the default; pass --server URL, set %s=URL, or name the agent's config by --config FILE or %s): %v",
			errUnreachable, l.server, envServer, envConfig, err)
	}
	return fmt.Errorf("%w at %s (from %s): %v", errUnreachable, l.server, l.serverFrom, err)
}
