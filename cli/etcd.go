package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/berth-dev/berth/cluster"
	"github.com/berth-dev/berth/etcdclient"
	"github.com/berth-dev/berth/internal/secretfile"
)

// etcdFlags are the cluster commands' way to etcd, named like etcdctl's
// (--endpoints, --cacert, --cert, --key, --user) with an etcd- prefix; each
// defaults to the agent's BERTH_SOURCES_ETCD_* variable. The password never
// comes from the command line, which every user of the host can read: it
// is read from --etcd-password-file, else $BERTH_SOURCES_ETCD_PASSWORD.
type etcdFlags struct {
	endpoints               string
	cacert, cert, key, user string
	passwordFile            string
	allowInsecureAuth       bool
	timeout                 time.Duration
}

func (f *etcdFlags) addFlags(fs *pflag.FlagSet) {
	env := func(k, def string) string {
		if v := os.Getenv("BERTH_SOURCES_ETCD_" + k); v != "" {
			return v
		}
		return def
	}
	insecure, _ := strconv.ParseBool(env("ALLOW_INSECURE_AUTH", "false"))
	fs.StringVar(&f.endpoints, "etcd-endpoints", env("ENDPOINTS", "http://127.0.0.1:2379"), "etcd endpoints, comma-separated")
	fs.StringVar(&f.cacert, "etcd-cacert", env("TLS_CA_FILE", ""), "CA file verifying etcd's certificate")
	fs.StringVar(&f.cert, "etcd-cert", env("TLS_CERT_FILE", ""), "client certificate file for etcd")
	fs.StringVar(&f.key, "etcd-key", env("TLS_KEY_FILE", ""), "client key file for etcd")
	fs.StringVar(&f.user, "etcd-user", env("USERNAME", ""), "etcd username (the password comes from --etcd-password-file or $BERTH_SOURCES_ETCD_PASSWORD)")
	fs.StringVar(&f.passwordFile, "etcd-password-file", env("PASSWORD_FILE", ""), "file holding the etcd password (mode 0600 or stricter)")
	fs.BoolVar(&f.allowInsecureAuth, "etcd-allow-insecure-auth", insecure, "allow the etcd password over plain http://")
	fs.DurationVar(&f.timeout, "etcd-timeout", 10*time.Second, "time limit of the etcd requests")
}

// errPasswordInArgv refuses --etcd-user NAME:PASSWORD.
var errPasswordInArgv = errors.New("--etcd-user: a password on the command line is readable by every user of the host; " +
	"put it in --etcd-password-file (mode 0600) or $BERTH_SOURCES_ETCD_PASSWORD")

func (f *etcdFlags) config() (etcdclient.Config, error) {
	c := etcdclient.Config{Endpoints: etcdclient.SplitEndpoints(f.endpoints), CAFile: f.cacert, CertFile: f.cert, KeyFile: f.key,
		Username: f.user, AllowInsecureAuth: f.allowInsecureAuth, DialTimeout: 5 * time.Second}
	if strings.Contains(f.user, ":") {
		return c, errPasswordInArgv
	}
	if f.passwordFile != "" {
		b, err := secretfile.Read("--etcd-password-file", f.passwordFile)
		if err != nil {
			return c, err
		}
		c.Password = strings.TrimRight(string(b), "\r\n")
	} else if f.user != "" {
		c.Password = os.Getenv("BERTH_SOURCES_ETCD_PASSWORD")
	}
	return c, c.Validate(func(field string) string { return etcdFlagOf[field] })
}

// etcdFlagOf names the flag of each etcdclient.Config field, for Validate.
var etcdFlagOf = map[string]string{"endpoints": "--etcd-endpoints", "tls.ca_file": "--etcd-cacert", "tls.cert_file": "--etcd-cert",
	"tls.key_file": "--etcd-key", "username": "--etcd-user", "password": "the password", "allow_insecure_auth": "--etcd-allow-insecure-auth"}

// registry connects to etcd; the caller closes the client.
func (f *etcdFlags) registry(ctx context.Context) (cluster.Registry, *clientv3.Client, error) {
	c, err := f.config()
	if err != nil {
		return cluster.Registry{}, nil, err
	}
	if err := probeEtcd(ctx, c); err != nil {
		return cluster.Registry{}, nil, err
	}
	cli, err := c.New(ctx)
	if err != nil {
		return cluster.Registry{}, nil, fmt.Errorf("etcd %s: %w", f.endpoints, err)
	}
	return cluster.Registry{Client: cli}, cli, nil
}

// do runs fn with a registry on a fresh client, within --etcd-timeout.
func (f *etcdFlags) do(ctx context.Context, fn func(ctx context.Context, reg cluster.Registry) error) error {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	reg, cli, err := f.registry(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	return f.wrap(fn(ctx, reg))
}

func (f *etcdFlags) wrap(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("etcd %s did not answer within %s: %w", f.endpoints, f.timeout, err)
	}
	return err
}
