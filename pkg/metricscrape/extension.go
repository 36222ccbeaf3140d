// Package metricscrape reads kube-scheduler's metrics from wherever they can be
// reached and turns them into a typed Snapshot.
package metricscrape

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// KubeconfigExtensionName names the kubeconfig cluster extension through which a
// control plane started by schedq-perf tells kubectl-schedq where its
// scheduler's metrics are, so that commands run against it need no flags.
const KubeconfigExtensionName = "schedq.kubectl-schedq.io/scheduler"

// SchedulerEndpoint is the payload of that extension, stored in the kubeconfig as
//
//	extensions:
//	- name: schedq.kubectl-schedq.io/scheduler
//	  extension:
//	    apiVersion: schedq.kubectl-schedq.io/v1alpha1
//	    kind: SchedulerEndpoint
//	    metricsURL: https://127.0.0.1:41234/metrics
//	    queueURL: http://127.0.0.1:41235/debug/schedq/queue
//	    insecureSkipTLSVerify: true
//
// The metrics endpoint is authenticated with the kubeconfig's own credentials.
type SchedulerEndpoint struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// MetricsURL is the scheduler's /metrics (HTTPS, delegated authn/authz).
	MetricsURL string `json:"metricsURL"`
	// QueueURL is the ground truth of the live queue, when the control plane
	// offers one (the embedded control plane does).
	QueueURL string `json:"queueURL,omitempty"`
	// InsecureSkipTLSVerify skips verification of the scheduler's self-signed
	// serving certificate, as upstream's metrics grabber does.
	InsecureSkipTLSVerify bool `json:"insecureSkipTLSVerify,omitempty"`
}

// SchedulerEndpointAPIVersion and SchedulerEndpointKind identify the payload.
const (
	SchedulerEndpointAPIVersion = "schedq.kubectl-schedq.io/v1alpha1"
	SchedulerEndpointKind       = "SchedulerEndpoint"
)

// EndpointFromKubeconfig returns the SchedulerEndpoint a kubeconfig carries
// for the cluster at server (the API server URL the client config resolved
// to, so --context and --cluster are honoured). When several clusters share
// the server, the current context's wins. It returns nil when there is none.
func EndpointFromKubeconfig(raw clientcmdapi.Config, server string) (*SchedulerEndpoint, error) {
	var names []string
	for name, c := range raw.Clusters {
		if c != nil && c.Server == server && c.Extensions[KubeconfigExtensionName] != nil {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	sort.Strings(names)
	name := names[0]
	if ctx := raw.Contexts[raw.CurrentContext]; ctx != nil && slices.Contains(names, ctx.Cluster) {
		name = ctx.Cluster
	}
	ep, err := decodeEndpoint(raw.Clusters[name].Extensions[KubeconfigExtensionName])
	if err != nil {
		return nil, fmt.Errorf("kubeconfig cluster %q, extension %s: %w", name, KubeconfigExtensionName, err)
	}
	return ep, nil
}

func decodeEndpoint(obj runtime.Object) (*SchedulerEndpoint, error) {
	ep := &SchedulerEndpoint{}
	switch o := obj.(type) {
	case *runtime.Unknown:
		if err := json.Unmarshal(o.Raw, ep); err != nil {
			return nil, err
		}
	case *SchedulerEndpoint:
		*ep = *o
	default:
		raw, err := json.Marshal(obj)
		if err == nil {
			err = json.Unmarshal(raw, ep)
		}
		if err != nil {
			return nil, err
		}
	}
	if ep.Kind != "" && ep.Kind != SchedulerEndpointKind {
		return nil, fmt.Errorf("kind %q, want %s", ep.Kind, SchedulerEndpointKind)
	}
	if ep.MetricsURL == "" {
		return nil, fmt.Errorf("no metricsURL")
	}
	return ep, nil
}

// GetObjectKind and DeepCopyObject make a SchedulerEndpoint a runtime.Object,
// so a control plane can put it into a kubeconfig as it is.
func (e *SchedulerEndpoint) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject implements runtime.Object.
func (e *SchedulerEndpoint) DeepCopyObject() runtime.Object {
	if e == nil {
		return nil
	}
	out := *e
	return &out
}
