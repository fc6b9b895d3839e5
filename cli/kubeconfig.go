package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/berth-dev/berth/internal/secretfile"
)

// kubeconfigFlags are berth kubeconfig's own flags.
type kubeconfigFlags struct {
	context    string
	output     string
	merge      bool
	embedToken bool
	caFile     string
}

func kubeconfigCmd() *cobra.Command {
	var l locator
	var f kubeconfigFlags
	cmd := &cobra.Command{
		Use:   "kubeconfig [--server URL] [--token-file FILE] [--context NAME] [-o FILE | --merge]",
		Short: "Print a kubeconfig for the local berth, for kubectl and client-go",
		Long: "Print a kubeconfig whose one context (named after the node, namespace default) reaches the\n" +
			"berth that the client commands find: --server, --token-file, $BERTH_SERVER, $BERTH_TOKEN_FILE,\n" +
			"else the agent's config (--config, $BERTH_CONFIG or /etc/berth/config.yaml). The user refers to\n" +
			"the token file by its path (tokenFile), so the token stays out of the kubeconfig; --embed-token\n" +
			"copies the token in instead; a token file of several tokens (which kubectl would send whole)\n" +
			"needs --embed-token, which copies the first. kubectl sends a token over https only (server.tls.self_signed:\n" +
			"true serves it). An https server's CA is --certificate-authority FILE, else its certificate\n" +
			"(server.tls.cert_file, or the self-signed one under root_dir/pki) itself. -o FILE\n" +
			"writes the kubeconfig to FILE; --merge adds the context to $KUBECONFIG or ~/.kube/config,\n" +
			"keeping the other contexts (and the current one, if any). Either file is written with mode 0600\n" +
			"(replaced, even when it existed with another mode), owned by the caller.\n\n" +
			"  berth kubeconfig -o ~/.kube/berth.yaml\n" +
			"  kubectl --kubeconfig ~/.kube/berth.yaml get pods",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.merge && f.output != "" {
				return errors.New("kubeconfig: -o and --merge do not go together")
			}
			kc, err := buildKubeconfig(&l, f, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			switch {
			case f.merge:
				return mergeKubeconfig(kc, cmd.ErrOrStderr())
			}
			b, err := clientcmd.Write(*kc)
			if err != nil {
				return err
			}
			if f.output != "" {
				if err := secretfile.WritePrivate(f.output, b); err != nil {
					return fmt.Errorf("kubeconfig: -o %s: %w", f.output, err)
				}
				return nil
			}
			if hasToken(kc) {
				fmt.Fprintln(cmd.ErrOrStderr(), "berth: the kubeconfig on stdout holds the token itself: -o FILE writes it to a file of mode 0600")
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	}
	l.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&f.context, "context", "", "name of the context, cluster and user (default: the node's name, node_name of the agent's config)")
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "write the kubeconfig to this file instead of stdout")
	cmd.Flags().BoolVar(&f.merge, "merge", false, "add the context to $KUBECONFIG (its first file) or ~/.kube/config, keeping the others")
	cmd.Flags().BoolVar(&f.embedToken, "embed-token", false, "copy the token into the kubeconfig instead of referring to the token file")
	cmd.Flags().StringVar(&f.caFile, "certificate-authority", "", "CA file verifying an https server (default: the agent's server.tls.cert_file, or its self-signed certificate, itself)")
	return cmd
}

// buildKubeconfig is the kubeconfig of the berth l locates, with one
// context named f.context (default: the agent's node name) as the current
// one. Notes (a token file with several tokens) go to stderr.
func buildKubeconfig(l *locator, f kubeconfigFlags, stderr io.Writer) (*clientcmdapi.Config, error) {
	if err := l.locate(); err != nil {
		return nil, err
	}
	name := f.context
	if name == "" {
		if l.cfg == nil {
			if err := l.loadConfig(); err != nil {
				return nil, fmt.Errorf("%w\n(pass --context NAME to name the context without it)", err)
			}
		}
		name = l.cfg.NodeName
	}
	cluster := clientcmdapi.NewCluster()
	cluster.Server = l.server
	switch {
	case f.caFile != "":
		pem, err := os.ReadFile(f.caFile)
		if err != nil {
			return nil, fmt.Errorf("--certificate-authority: %w", err)
		}
		cluster.CertificateAuthorityData = pem
	case l.caFile != "":
		pem, err := l.readCA()
		if err != nil {
			return nil, err
		}
		cluster.CertificateAuthorityData = pem
	}
	user := clientcmdapi.NewAuthInfo()
	if l.tokenFile != "" {
		tokens, err := secretfile.Tokens("token file (from "+l.tokenFrom+")", l.tokenFile)
		if err != nil {
			return nil, err
		}
		switch {
		case f.embedToken:
			user.Token = tokens[0]
		case len(tokens) > 1:
			// kubectl would send the whole file as one token; copying one in
			// unasked would print it where `> file` makes it readable.
			return nil, fmt.Errorf("kubeconfig: %s (from %s) holds %d tokens, which kubectl would send as one: "+
				"pass --embed-token with -o FILE or --merge to copy the first into a file of mode 0600, "+
				"or --token-file FILE naming a file of one token", l.tokenFile, l.tokenFrom, len(tokens))
		default:
			abs, err := filepath.Abs(l.tokenFile)
			if err != nil {
				return nil, err
			}
			user.TokenFile = abs
		}
	}
	if l.tokenFile != "" && !strings.HasPrefix(l.server, "https://") {
		fmt.Fprintf(stderr, "berth: warning: kubectl and client-go send no token to an http:// server (%s): "+
			"serve TLS (server.tls.self_signed: true, or cert_file and key_file) to use the token with kubectl; berth's own commands send it\n", l.server)
	}
	kctx := clientcmdapi.NewContext()
	kctx.Cluster, kctx.AuthInfo, kctx.Namespace = name, name, "default"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = cluster
	kc.AuthInfos[name] = user
	kc.Contexts[name] = kctx
	kc.CurrentContext = name
	return kc, nil
}

// mergeKubeconfig adds kc's cluster, user and context to the kubeconfig
// file kubectl config set-context would write (the first existing file of
// $KUBECONFIG, else ~/.kube/config), replacing entries of the same names
// only; the current context becomes kc's only where kubectl's merged view
// has none. The file is locked as kubectl locks it and written with
// secretfile.WritePrivate (0600).
func mergeKubeconfig(kc *clientcmdapi.Config, stderr io.Writer) error {
	po := clientcmd.NewDefaultPathOptions()
	start, err := po.GetStartingConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig --merge: %w", err)
	}
	file := po.GetDefaultFilename()
	unlock, err := lockKubeconfig(file)
	if err != nil {
		return fmt.Errorf("kubeconfig --merge: %w", err)
	}
	defer unlock()
	dest, err := clientcmd.LoadFromFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		dest, err = clientcmdapi.NewConfig(), nil
	}
	if err != nil {
		return fmt.Errorf("kubeconfig --merge: %w", err)
	}
	name := kc.CurrentContext
	dest.Clusters[name] = kc.Clusters[name]
	dest.AuthInfos[name] = kc.AuthInfos[name]
	dest.Contexts[name] = kc.Contexts[name]
	switched := start.CurrentContext == ""
	if switched {
		dest.CurrentContext = name
	}
	b, err := clientcmd.Write(*dest)
	if err != nil {
		return fmt.Errorf("kubeconfig --merge: %w", err)
	}
	if err := secretfile.WritePrivate(file, b); err != nil {
		return fmt.Errorf("kubeconfig --merge: %s: %w", file, err)
	}
	if switched {
		fmt.Fprintf(stderr, "Context %q added to %s as the current context: kubectl get pods\n", name, file)
	} else {
		fmt.Fprintf(stderr, "Context %q added to %s: kubectl --context %s get pods\n", name, file, name)
	}
	return nil
}

// lockKubeconfig takes kubectl's lock of a kubeconfig file (FILE.lock,
// made exclusively; kubectl config commands wait on it) and returns its
// release.
func lockKubeconfig(file string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, err
	}
	lock := file + ".lock"
	f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL, 0)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%s exists: another kubectl config command is writing %s (remove the lock if none is)", lock, file)
	}
	if err != nil {
		return nil, err
	}
	f.Close()
	return func() { os.Remove(lock) }, nil
}

// hasToken reports whether kc holds a token itself.
func hasToken(kc *clientcmdapi.Config) bool {
	for _, u := range kc.AuthInfos {
		if u.Token != "" {
			return true
		}
	}
	return false
}
