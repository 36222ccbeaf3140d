package metricscrape

import "context"

// MicroK8s is MicroK8s: nodes labelled microk8s.io/cluster=true.
var MicroK8s Locator = inProcess("MicroK8s",
	func(ctx context.Context, c *Cluster) (string, error) {
		return nodeLabelled(ctx, c, "microk8s.io/cluster")
	},
	"add --bind-address=0.0.0.0 to /var/snap/microk8s/current/args/kube-scheduler and restart MicroK8s")
