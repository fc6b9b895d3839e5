package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/berth-dev/berth/server"
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
			"copies the token in instead. kubectl sends a token over https only (server.tls.self_signed:\n" +
			"true serves it). An https server's CA is --certificate-authority FILE, else its certificate\n" +
			"(server.tls.cert_file, or the self-signed one under root_dir/pki) itself. -o FILE\n" +
			"writes the kubeconfig to FILE; --merge adds the context to $KUBECONFIG or ~/.kube/config,\n" +
			"keeping the other contexts (and the current one, if any).\n\n" +
			"  berth kubeconfig > ~/.kube/berth.yaml\n" +
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
			case f.output != "":
				if err := clientcmd.WriteToFile(*kc, f.output); err != nil {
					return fmt.Errorf("kubeconfig: -o %s: %w", f.output, err)
				}
				return nil
			}
			b, err := clientcmd.Write(*kc)
			if err != nil {
				return err
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
		tokens, err := server.LoadTokens("token file (from "+l.tokenFrom+")", l.tokenFile)
		if err != nil {
			return nil, err
		}
		switch {
		case f.embedToken:
			user.Token = tokens[0]
		case len(tokens) > 1:
			// kubectl would send the whole file as one token.
			user.Token = tokens[0]
			fmt.Fprintf(stderr, "berth: %s holds %d tokens; the kubeconfig holds the first itself, not the file's path\n", l.tokenFile, len(tokens))
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
// files kubectl reads ($KUBECONFIG, else ~/.kube/config) as kubectl config
// set-context would, replacing entries of the same names only; the current
// context becomes kc's only where there was none.
func mergeKubeconfig(kc *clientcmdapi.Config, stderr io.Writer) error {
	po := clientcmd.NewDefaultPathOptions()
	start, err := po.GetStartingConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig --merge: %w", err)
	}
	name := kc.CurrentContext
	start.Clusters[name] = kc.Clusters[name]
	start.AuthInfos[name] = kc.AuthInfos[name]
	start.Contexts[name] = kc.Contexts[name]
	switched := start.CurrentContext == ""
	if switched {
		start.CurrentContext = name
	}
	if err := clientcmd.ModifyConfig(po, *start, false); err != nil {
		return fmt.Errorf("kubeconfig --merge: %w", err)
	}
	file := po.GetDefaultFilename()
	if switched {
		fmt.Fprintf(stderr, "Context %q added to %s as the current context: kubectl get pods\n", name, file)
	} else {
		fmt.Fprintf(stderr, "Context %q added to %s: kubectl --context %s get pods\n", name, file, name)
	}
	return nil
}
