// Package metricscrape reads kube-scheduler's metrics from wherever they can be
// reached and turns them into a typed Snapshot.
package metricscrape

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
