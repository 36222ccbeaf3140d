package metricscrape

import "context"

// AKS is Azure Kubernetes Service: nodes labelled
// kubernetes.azure.com/cluster. Its control plane metrics (a preview) go to
// Azure Monitor managed service for Prometheus, which answers PromQL.
var AKS Locator = managedCloud("AKS",
	func(ctx context.Context, c *Cluster) (string, error) {
		return nodeLabelled(ctx, c, "kubernetes.azure.com/cluster")
	},
	"Azure Monitor managed service for Prometheus (AKS control plane metrics, a preview) in an Azure Monitor workspace")
