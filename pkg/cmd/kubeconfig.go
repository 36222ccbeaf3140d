package cmd

import (
	"fmt"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// noKubeconfigError is the want of any kubeconfig. It wraps
// clientcmd.ErrEmptyConfig (errors.Is holds).
type noKubeconfigError struct {
	// alternatives are the flags that do without one, if any.
	alternatives string
}

func (e *noKubeconfigError) Error() string {
	msg := "no kubeconfig: set KUBECONFIG or --kubeconfig, or give --server"
	if e.alternatives != "" {
		msg += ", or " + e.alternatives
	}
	return msg
}

func (e *noKubeconfigError) Unwrap() error { return clientcmd.ErrEmptyConfig }

// restConfig is the REST config of the kubeconfig with kubectl's flags
// applied, with the errors a user meets first said the same way in every
// command: no kubeconfig at all (which kubectl's defaults otherwise turn
// into "connection refused" on localhost:8080) and an unknown context.
// alternatives names the flags that do without a kubeconfig, if any.
func restConfig(getter genericclioptions.RESTClientGetter, alternatives string) (*rest.Config, error) {
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, kubeconfigError(err, alternatives)
	}
	// kubectl's flags default the server to localhost:8080, so an empty
	// kubeconfig does not fail to load: recognise it.
	if cfg.Host == clientcmd.ClusterDefaults.Server && !serverFlagSet(getter) {
		if raw, err := getter.ToRawKubeConfigLoader().RawConfig(); err == nil && clientcmdapi.IsConfigEmpty(&raw) {
			return nil, &noKubeconfigError{alternatives: alternatives}
		}
	}
	return cfg, nil
}

// kubeconfigError says the same thing, whichever call of clientcmd failed,
// for a kubeconfig that is missing or names no such context.
func kubeconfigError(err error, alternatives string) error {
	switch {
	case clientcmd.IsEmptyConfig(err):
		return &noKubeconfigError{alternatives: alternatives}
	case clientcmd.IsContextNotFound(err) || strings.HasPrefix(err.Error(), "context \""):
		return fmt.Errorf("context %q is not in the kubeconfig: see 'kubectl config get-contexts' for the ones there are", missingContext(err))
	}
	return err
}

func serverFlagSet(getter genericclioptions.RESTClientGetter) bool {
	cf, ok := getter.(*genericclioptions.ConfigFlags)
	return ok && cf.APIServer != nil && *cf.APIServer != ""
}

// missingContext is the context name in clientcmd's `context "NAME" does
// not exist` or "context was not found for specified context: NAME" (inside
// an aggregate, "[…, …]").
func missingContext(err error) string {
	const marker = "context was not found for specified context: "
	msg := err.Error()
	var quoted string
	if _, err := fmt.Sscanf(msg, "context %q does not exist", &quoted); err == nil {
		return quoted
	}
	i := strings.Index(msg, marker)
	if i < 0 {
		return ""
	}
	name := msg[i+len(marker):]
	if j := strings.IndexAny(name, ",]"); j >= 0 {
		name = name[:j]
	}
	return name
}
