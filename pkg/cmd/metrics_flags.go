package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
)

// metricsFlags are the flags that name where the scheduler's metrics are,
// shared by status and explain.
type metricsFlags struct {
	MetricsURL         string
	PrometheusURL      string
	PrometheusSelector string
	MetricsFile        string

	// The Prometheus server's own credentials and CA. The token file's
	// path is not a secret; header values are, and headerFlag never prints
	// them.
	PrometheusBearerTokenFile      string
	PrometheusHeaders              headerFlag
	PrometheusCertificateAuthority string

	// SchedulerNamespace is one more namespace where discovery may look
	// for a second kube-scheduler (and send it the kubeconfig's
	// credentials).
	SchedulerNamespace string
}

func (f *metricsFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.MetricsURL, "metrics-url", f.MetricsURL, "Read the scheduler's metrics from this URL (http, or https with the kubeconfig's credentials)")
	cmd.Flags().StringVar(&f.PrometheusURL, "prometheus-url", f.PrometheusURL, "Read the scheduler's series from this Prometheus server (instant queries)")
	cmd.Flags().StringVar(&f.PrometheusSelector, "prometheus-selector", f.PrometheusSelector, `Label matchers that pick one scheduler on the Prometheus server, e.g. 'job="kube-scheduler"'`)
	cmd.Flags().StringVar(&f.PrometheusBearerTokenFile, "prometheus-bearer-token-file", f.PrometheusBearerTokenFile,
		"Send the token in this file (read at each query) to the --prometheus-url server as Authorization: Bearer")
	cmd.Flags().Var(&f.PrometheusHeaders, "prometheus-header",
		"Send this header to the --prometheus-url server, as 'Name: value' (repeatable), e.g. 'X-Scope-OrgID: tenant-1'; values are never printed")
	cmd.Flags().StringVar(&f.PrometheusCertificateAuthority, "prometheus-certificate-authority", f.PrometheusCertificateAuthority,
		"Check the --prometheus-url server's certificate against the CA in this file (default: the system's roots)")
	cmd.Flags().StringVar(&f.MetricsFile, "metrics-file", f.MetricsFile, "Read a saved text exposition of the scheduler's metrics, or - for stdin")
	_ = cmd.MarkFlagFilename("metrics-file", "prom", "txt")
	cmd.Flags().StringVar(&f.SchedulerNamespace, "scheduler-namespace", f.SchedulerNamespace, "One more namespace to look for a second kube-scheduler in with --scheduler-name, beside kube-system and the cluster's own scheduler's (its pods there get the kubeconfig's credentials)")
	_ = cmd.MarkFlagFilename("prometheus-bearer-token-file")
	_ = cmd.MarkFlagFilename("prometheus-certificate-authority", "crt", "pem")
}

// options names the source; the caller adds the kubeconfig when it resolves.
func (f *metricsFlags) options() metricscrape.Options {
	return metricscrape.Options{
		MetricsURL: f.MetricsURL, PrometheusURL: f.PrometheusURL, PrometheusSelector: f.PrometheusSelector, MetricsFile: f.MetricsFile,
		PrometheusBearerTokenFile: f.PrometheusBearerTokenFile, PrometheusHeaders: f.PrometheusHeaders.headers,
		PrometheusCertificateAuthority: f.PrometheusCertificateAuthority,
		SchedulerNamespace:             f.SchedulerNamespace,
	}
}

// validate checks the flags without I/O.
func (f *metricsFlags) validate() error {
	if err := f.PrometheusHeaders.err(); err != nil {
		return err
	}
	opts := f.options()
	return opts.Validate()
}

// withTLSFlags adds kubectl's TLS flags to opts: for a URL read without a
// kubeconfig, and --insecure-skip-tls-verify for --prometheus-url.
func withTLSFlags(opts metricscrape.Options, getter genericclioptions.RESTClientGetter) metricscrape.Options {
	if cf, ok := getter.(*genericclioptions.ConfigFlags); ok && cf != nil {
		if cf.Insecure != nil {
			opts.InsecureSkipTLSVerify = *cf.Insecure
		}
		if cf.CAFile != nil {
			opts.CertificateAuthority = *cf.CAFile
		}
	}
	return opts
}

func (f *metricsFlags) named() bool {
	return f.MetricsURL != "" || f.PrometheusURL != "" || f.MetricsFile != ""
}

// headerFlag collects --prometheus-header. It keeps the values as
// bound.Secret and prints only the names; a value that does not parse is
// reported by Validate, because pflag would quote the whole argument.
type headerFlag struct {
	headers []bound.Header
	errs    []error
}

func (h *headerFlag) String() string {
	names := make([]string, len(h.headers))
	for i, x := range h.headers {
		names[i] = x.String()
	}
	return "[" + strings.Join(names, ", ") + "]"
}

func (h *headerFlag) Set(s string) error {
	x, err := bound.ParseHeader(s)
	if err != nil {
		h.errs = append(h.errs, fmt.Errorf("--prometheus-header #%d: %w", len(h.headers)+len(h.errs)+1, err))
		return nil
	}
	h.headers = append(h.headers, x)
	return nil
}

func (h *headerFlag) Type() string { return "'Name: value'" }

func (h *headerFlag) err() error { return errors.Join(h.errs...) }
