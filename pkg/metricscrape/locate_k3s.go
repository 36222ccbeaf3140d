package metricscrape

import "context"

// K3s is k3s: server version v1.33.4+k3s1, nodes labelled
// node.kubernetes.io/instance-type=k3s by its cloud provider.
var K3s Locator = inProcess("k3s",
	func(ctx context.Context, c *Cluster) (string, error) { return distributionMarks(ctx, c, "+k3s", "k3s") },
	"start the server with --kube-scheduler-arg=bind-address=0.0.0.0")
