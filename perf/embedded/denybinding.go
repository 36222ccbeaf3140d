package embedded

import (
	"context"
	"fmt"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// DenyBinding makes every binding of a pod whose name starts with prefix fail,
// through a ValidatingAdmissionPolicy (and binding) called name that answers
// message. Such a failure has no rejecting plugin, so the scheduler sends
// the pod to the error backoff heap: errors on demand with upstream objects
// only. It returns once kube-apiserver enforces the policy, probing with the
// binding of a gated pod in namespace ns.
func DenyBinding(ctx context.Context, client kubernetes.Interface, name, prefix, message, ns string) error {
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptrTo(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods/binding"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: fmt.Sprintf("!object.metadata.name.startsWith(%q)", prefix), Message: message}},
		},
	}
	if _, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ValidatingAdmissionPolicy %s: %w", name, err)
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
	}
	if _, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ValidatingAdmissionPolicyBinding %s: %w", name, err)
	}
	// The policy takes effect once kube-apiserver's policy informer has it:
	// probe with bindings of gated pods until one is denied.
	for i := 0; ; i++ {
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%sprobe-%d", prefix, i), Namespace: ns},
			Spec: v1.PodSpec{
				SchedulingGates: []v1.PodSchedulingGate{{Name: "schedq.kubectl-schedq.io/probe"}},
				Containers:      []v1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
			},
		}
		if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("probe pod %s/%s: %w", ns, pod.Name, err)
		}
		err := client.CoreV1().Pods(ns).Bind(ctx, &v1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: ns},
			Target:     v1.ObjectReference{Kind: "Node", Name: FakeNodeName(0)},
		}, metav1.CreateOptions{})
		if delErr := client.CoreV1().Pods(ns).Delete(ctx, pod.Name, *metav1.NewDeleteOptions(0)); delErr != nil {
			return delErr
		}
		if err != nil && strings.Contains(err.Error(), message) {
			return nil
		}
		if i == 100 {
			return fmt.Errorf("the binding policy %s never took effect: %v", name, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
