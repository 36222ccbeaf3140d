package metricscrape

import (
	"context"
	"strings"
)

// GKE is Google Kubernetes Engine: server version v1.33.4-gke.1245000,
// nodes labelled cloud.google.com/gke-nodepool. With control plane metrics
// on, the scheduler's series go to Cloud Monitoring through Google Cloud
// Managed Service for Prometheus, which answers PromQL.
var GKE Locator = managedCloud("GKE",
	func(ctx context.Context, c *Cluster) (string, error) {
		if v, err := c.ServerVersion(ctx); err == nil && strings.Contains(v, "-gke.") {
			return "server version " + v, nil
		}
		return nodeLabelled(ctx, c, "cloud.google.com/gke-nodepool")
	},
	"Google Cloud Managed Service for Prometheus (control plane metrics, turned on with gcloud container clusters update --monitoring=SYSTEM,SCHEDULER)")
