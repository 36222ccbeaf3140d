package provider

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	callbound "github.com/kubectl-schedq/kubectl-schedq/pkg/bound"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

// Kubeconfig runs on the cluster a kubeconfig names. It refuses unless
// AllowExisting (a workload creates up to thousands of nodes), refuses when
// the live scheduler's feature gates differ from the ones the workload sets,
// keeps the fake nodes it creates alive (their leases renewed, the
// admission's not-ready taint removed), and deletes everything the run
// created when it stops: at the end, after a failure, after an interrupt.
type Kubeconfig struct {
	// Path is the kubeconfig file; empty for the default loading rules
	// ($KUBECONFIG, ~/.kube/config).
	Path string `json:"path,omitempty"`
	// Context is the context to use; empty for the current one.
	Context string `json:"context,omitempty"`
	// MetricsURL is the scheduler's /metrics; empty for the kubeconfig's
	// scheduler extension, else a port-forward to the kube-scheduler pod.
	MetricsURL string `json:"metricsURL,omitempty"`
	// AllowExisting must be true.
	AllowExisting bool `json:"allowExisting,omitempty"`
	// RequestTimeout bounds each call to the cluster; 0 is
	// DefaultRequestTimeout.
	RequestTimeout time.Duration `json:"requestTimeout,omitempty"`

	// Set by tests instead of loading the kubeconfig.
	restConfig *rest.Config
	client     kubernetes.Interface
	dynamic    dynamic.Interface
	metrics    runner.MetricsReader
}

func init() {
	Register(Registration{
		Name:       NameKubeconfig,
		Starting:   "connecting to the kubeconfig's cluster",
		Flags:      []string{FlagAllowExisting, FlagKubeconfig, FlagContext, FlagMetricsURL},
		FixedGates: true,
		LeftBehind: func(s Settings, runID string) string {
			cmd := "kubectl schedq perf cleanup --run " + runID
			if s.Kubeconfig != "" {
				cmd += " --kubeconfig " + s.Kubeconfig
			}
			if s.Context != "" {
				cmd += " --context " + s.Context
			}
			return fmt.Sprintf("objects labelled %s=%s may be left: %s", runner.RunLabelKey, runID, cmd)
		},
		Check: func(s Settings) error {
			if !s.AllowExisting {
				return ErrExistingCluster
			}
			return nil
		},
		New: func(s Settings) Provider {
			return &Kubeconfig{Path: s.Kubeconfig, Context: s.Context, MetricsURL: s.MetricsURL, AllowExisting: s.AllowExisting, RequestTimeout: s.RequestTimeout}
		},
	})
}

// ErrExistingCluster is returned by Start without AllowExisting.
var ErrExistingCluster = errors.New("refusing to run on an existing cluster: a workload creates nodes (thousands at the performance sizes) and pods there; add --allow-existing-cluster to allow it (everything the run creates is labelled " + runner.RunLabelKey + " and deleted at the end)")

// Name implements Provider.
func (*Kubeconfig) Name() string { return NameKubeconfig }

// Start implements Provider.
func (k *Kubeconfig) Start(ctx context.Context, spec Spec) (*Instance, error) {
	if !k.AllowExisting {
		return nil, ErrExistingCluster
	}
	began := time.Now()
	cfg, client, dyn, reader := k.restConfig, k.client, k.dynamic, k.metrics
	where := "the cluster of the kubeconfig"
	if cfg == nil {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		if k.Path != "" {
			rules.ExplicitPath = k.Path
		}
		cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: k.Context})
		var err error
		if cfg, err = cc.ClientConfig(); err != nil {
			return nil, fmt.Errorf("kubeconfig: %w", err)
		}
		callbound.APIConfig(cfg)
		where = "cluster " + cfg.Host
		if client, err = kubernetes.NewForConfig(cfg); err != nil {
			return nil, err
		}
		if dyn, err = dynamic.NewForConfig(cfg); err != nil {
			return nil, err
		}
		if reader, err = k.metricsReader(cc, cfg, client); err != nil {
			return nil, err
		}
	}
	// The first calls to the cluster: a server that never answers ends
	// the run here, within the bound, not at the first wait.
	gctx, cancel := context.WithTimeout(ctx, k.bound())
	err := checkGates(gctx, reader, spec.Workload.FeatureGates, where)
	cancel()
	if err != nil {
		if c, ok := reader.(interface{ Close() }); ok {
			c.Close()
		}
		if gctx.Err() == context.DeadlineExceeded || callbound.IsTimeout(err) {
			return nil, &callbound.TimeoutError{Call: "connecting to the kubeconfig's cluster", Bound: k.bound(), Err: err}
		}
		return nil, err
	}
	keeper, err := startNodeKeeper(client, spec.RunLabels)
	if err != nil {
		return nil, err
	}
	ledger := runner.NewLedger()
	// Every call the workload makes is bounded as the first ones are
	// (watches and port-forwards excepted: they last as long as they are
	// used).
	bounded := rest.CopyConfig(cfg)
	bounded.Wrap(callbound.Transport(k.bound()))
	inst := &Instance{
		Cluster: runner.Cluster{
			Name:       where,
			RESTConfig: bounded,
			Metrics:    reader,
		},
		Ledger:          ledger,
		StartDuration:   time.Since(began),
		NamespacePrefix: NamespacePrefix(spec.RunLabels[runner.RunLabelKey]),
		Notes: []string{fmt.Sprintf("running on %s in namespaces of its own (%s…); everything the run creates is labelled %s=%s and deleted at the end",
			where, NamespacePrefix(spec.RunLabels[runner.RunLabelKey]), runner.RunLabelKey, spec.RunLabels[runner.RunLabelKey])},
	}
	inst.stop = func(ctx context.Context) error {
		keeper.stop()
		if c, ok := reader.(interface{ Close() }); ok {
			defer c.Close()
		}
		cc := client
		if k.restConfig == nil {
			cc = cleanupClient(cfg, client)
		}
		removed, err := Cleanup(ctx, cc, dyn, spec.RunLabels, ledger, k.bound())
		inst.Removed = removed.String()
		return err
	}
	return inst, nil
}

func (k *Kubeconfig) bound() time.Duration {
	if k.RequestTimeout > 0 {
		return k.RequestTimeout
	}
	return callbound.DefaultRequestTimeout
}

// NamespacePrefix is what a run on an existing cluster puts before the
// workload's namespaces: schedq-<run id>-, so that namespace-1 of run
// 3f9a1c02de is schedq-3f9a1c02de-namespace-1.
func NamespacePrefix(runID string) string {
	if runID == "" {
		return ""
	}
	return "schedq-" + runID + "-"
}

// cleanupClient is client without client-side throttling (client-go's
// default of 5 requests per second would make the cleanup of a large run
// wait minutes on itself).
func cleanupClient(cfg *rest.Config, client kubernetes.Interface) kubernetes.Interface {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = -1, 0
	// Protobuf: thousands of delete responses decode at a fraction of
	// JSON's cost, on a machine the API server shares.
	c.ContentType = "application/vnd.kubernetes.protobuf"
	c.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	fast, err := kubernetes.NewForConfig(c)
	if err != nil {
		return client
	}
	return fast
}

func (k *Kubeconfig) metricsReader(cc clientcmd.ClientConfig, cfg *rest.Config, client kubernetes.Interface) (runner.MetricsReader, error) {
	if k.MetricsURL != "" {
		return NewHTTPReader(k.MetricsURL, cfg, true, "")
	}
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, err
	}
	ep, err := metricscrape.EndpointFromKubeconfig(raw, cfg.Host)
	if err != nil {
		return nil, err
	}
	if ep != nil {
		return NewHTTPReader(ep.MetricsURL, cfg, ep.InsecureSkipTLSVerify, "")
	}
	return NewPortForwardReader(cfg, client)
}

// GateMismatchError says which gates of a workload the live scheduler does
// not have.
type GateMismatchError struct {
	Where string
	// Mismatches are "Gate: workload wants X, the scheduler has Y".
	Mismatches []string
}

func (e *GateMismatchError) Error() string {
	return fmt.Sprintf("the scheduler of %s does not run with the workload's feature gates (%s); run it on a cluster whose scheduler does, or use --cluster embedded or kind, which start one with the workload's gates",
		e.Where, strings.Join(e.Mismatches, "; "))
}

// checkGates compares the gates the workload sets with the scheduler's
// kubernetes_feature_enabled.
func checkGates(ctx context.Context, reader runner.MetricsReader, want map[string]bool, where string) error {
	if reader == nil {
		return errors.New("no way to read the scheduler's metrics, so its feature gates cannot be checked")
	}
	f, err := reader.ReadMetrics(ctx)
	if err != nil {
		return fmt.Errorf("read the scheduler's metrics to check its feature gates (%s): %w", reader, err)
	}
	snap, err := metricscrape.FromFamilies(reader.String(), f)
	if err != nil {
		return err
	}
	var mismatches []string
	for gate, v := range want {
		live, ok := snap.FeatureGates[gate]
		switch {
		case !ok:
			mismatches = append(mismatches, fmt.Sprintf("%s: the workload wants %t, the scheduler does not report it", gate, v))
		case live.Enabled != v:
			mismatches = append(mismatches, fmt.Sprintf("%s: the workload wants %t, the scheduler has %t", gate, v, live.Enabled))
		}
	}
	if len(mismatches) == 0 {
		return nil
	}
	sort.Strings(mismatches)
	return &GateMismatchError{Where: where, Mismatches: mismatches}
}
