package gather

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
)

// listPodGroups reads the PodGroups the pending pods name, one list per
// namespace that has such pods, only when some pod names one: most
// clusters have none, and pay nothing. It returns a note instead when they
// cannot be read.
func listPodGroups(ctx context.Context, c kubernetes.Interface, pods []*corev1.Pod, limit time.Duration) ([]*schedulingv1beta1.PodGroup, string) {
	namespaces := map[string]bool{}
	for _, p := range pods {
		if g := p.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil && p.Spec.NodeName == "" {
			namespaces[p.Namespace] = true
		}
	}
	if len(namespaces) == 0 {
		return nil, ""
	}
	names := make([]string, 0, len(namespaces))
	for ns := range namespaces {
		names = append(names, ns)
	}
	sort.Strings(names)
	out := []*schedulingv1beta1.PodGroup{}
	for _, ns := range names {
		list, err := c.SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{})
		switch {
		case err == nil:
		case apierrors.IsNotFound(err):
			return nil, "PodGroups (scheduling.k8s.io/v1beta1) are not served: pod-group members are explained without their group's object"
		case apierrors.IsForbidden(err):
			return nil, fmt.Sprintf("may not list PodGroups in namespace %q (grant list on podgroups.scheduling.k8s.io): pod-group members are explained without their group's object", ns)
		default:
			return nil, fmt.Sprintf("cannot list PodGroups (%v): pod-group members are explained without their group's object", shortError(bound.Call("listing PodGroups", limit, err)))
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
	}
	return out, ""
}
