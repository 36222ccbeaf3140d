package metricscrape

import "context"

// K0s is k0s: server and kubelet versions v1.33.4+k0s.
var K0s Locator = inProcess("k0s",
	func(ctx context.Context, c *Cluster) (string, error) { return distributionMarks(ctx, c, "+k0s", "") },
	"set spec.scheduler.extraArgs bind-address: 0.0.0.0 in k0s.yaml")
