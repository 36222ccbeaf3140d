package metricscrape

import (
	"context"
	"fmt"
)

// OutOfReach is a Locator for a platform that keeps kube-scheduler where
// this command cannot reach it: inside a distribution's server process
// (k3s, k0s, MicroK8s) or in a cloud's hidden control plane (GKE, AKS). It
// only recognises the platform and says what gets the metrics there.
type OutOfReach struct {
	Name string
	// Marks says whether the cluster is the platform: the evidence, or "".
	Marks func(ctx context.Context, c *Cluster) (string, error)
	// Why says where the scheduler is; Remedy names the flag.
	Why, Remedy string
}

// Platform implements Locator.
func (l *OutOfReach) Platform() string { return l.Name }

// Detect implements Locator.
func (l *OutOfReach) Detect(ctx context.Context, c *Cluster) (Detection, error) {
	ev, err := l.Marks(ctx, c)
	if err != nil || ev == "" {
		return Detection{}, err
	}
	return Detection{Looks: true, Evidence: ev}, nil
}

// Locate implements Locator: always an *UnreachableError.
func (l *OutOfReach) Locate(ctx context.Context, c *Cluster) (*Endpoint, error) {
	ev, _ := l.Marks(ctx, c)
	return nil, &UnreachableError{Platform: l.Name, Evidence: ev, Why: l.Why, Remedy: l.Remedy}
}

// inProcess is a distribution that runs kube-scheduler inside its server
// process: no pod, and the metrics on the server host's 10259 only once the
// scheduler is bound to an address that can be reached (bind says how).
func inProcess(name string, marks func(ctx context.Context, c *Cluster) (string, error), bind string) *OutOfReach {
	return &OutOfReach{
		Name: name, Marks: marks,
		Why:    fmt.Sprintf("no scheduler pod: %s runs kube-scheduler in the server process", name),
		Remedy: fmt.Sprintf("use --metrics-url https://<server>:%d/metrics once the scheduler listens there (%s)", SchedulerSecurePort, bind),
	}
}

// managedCloud is a cloud whose control plane runs out of sight and exports
// the scheduler's metrics only to its managed Prometheus.
func managedCloud(name string, marks func(ctx context.Context, c *Cluster) (string, error), prometheus string) *OutOfReach {
	return &OutOfReach{
		Name: name, Marks: marks,
		Why:    "no scheduler pod: " + name + " runs kube-scheduler out of sight and exports its metrics only to " + prometheus,
		Remedy: "use --prometheus-url with its PromQL endpoint",
	}
}

// nodeLabelled says whether a node carries label; a node list that is
// forbidden is no mark.
func nodeLabelled(ctx context.Context, c *Cluster, label string) (string, error) {
	n, err := c.Node(ctx)
	if err != nil || n == nil {
		return "", nil
	}
	if v, ok := n.Labels[label]; ok && v != "" {
		return "node " + n.Name + " labelled " + label + "=" + v, nil
	}
	return "", nil
}
