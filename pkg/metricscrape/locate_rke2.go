package metricscrape

import (
	"context"
	"strings"
)

// RKE2 finds RKE2's scheduler: static pods in kube-system with kubeadm's
// labels (component=kube-scheduler, tier=control-plane; rancher/rke2
// pkg/podtemplate) and kubeadm's Lease, on a cluster whose server version
// carries "+rke2" (v1.33.4+rke2r1) or whose nodes RKE2's cloud provider
// labels node.kubernetes.io/instance-type=rke2.
var RKE2 Locator = &PodLocator{Name: "RKE2", Pods: KubeadmSchedulerPods, Marks: rke2Marks}

func rke2Marks(ctx context.Context, c *Cluster) (string, error) {
	return distributionMarks(ctx, c, "+rke2", "rke2")
}

// distributionMarks says whether the server version carries suffix, or a
// node the instance-type label value k3s's cloud provider gives it (k3s and
// RKE2 set it to their name). A node list that is forbidden is no mark.
func distributionMarks(ctx context.Context, c *Cluster, suffix, instanceType string) (string, error) {
	v, err := c.ServerVersion(ctx)
	if err != nil {
		return "", err
	}
	if strings.Contains(v, suffix) {
		return "server version " + v, nil
	}
	if instanceType == "" {
		return "", nil
	}
	n, err := c.Node(ctx)
	if err != nil || n == nil {
		return "", nil
	}
	if n.Labels[instanceTypeLabel] == instanceType {
		return "node " + n.Name + " labelled " + instanceTypeLabel + "=" + instanceType, nil
	}
	return "", nil
}

// instanceTypeLabel is the well-known node label k3s's and RKE2's cloud
// provider fill with the distribution's name.
const instanceTypeLabel = "node.kubernetes.io/instance-type"
