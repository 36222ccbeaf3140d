package metricscrape

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Identity is who the cluster thinks the kubeconfig's credentials are.
type Identity struct {
	Username string
	Groups   []string
}

// String is the username and its groups.
func (id *Identity) String() string {
	if id == nil || id.Username == "" {
		return "unknown identity"
	}
	if len(id.Groups) == 0 {
		return id.Username
	}
	return fmt.Sprintf("%s (groups %s)", id.Username, strings.Join(id.Groups, ", "))
}

// WhoAmI asks the API server who the client is (SelfSubjectReview, what
// `kubectl auth whoami` does). With impersonation it answers for the
// impersonated identity.
func WhoAmI(ctx context.Context, client kubernetes.Interface) (*Identity, error) {
	r, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return &Identity{Username: r.Status.UserInfo.Username, Groups: r.Status.UserInfo.Groups}, nil
}

// CanGetMetrics asks the API server whether the client may `get /metrics`.
// kube-scheduler delegates its authorization to the API server with the same
// question, so the answer is the scheduler's. It is how impersonation is
// honoured: the scheduler ignores impersonation headers.
func CanGetMetrics(ctx context.Context, client kubernetes.Interface) (bool, error) {
	r, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: MetricsPath, Verb: "get"},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return r.Status.Allowed, nil
}

// MetricsReaderRBAC returns the minimal ClusterRole and ClusterRoleBinding
// that let id get kube-scheduler's /metrics, as YAML for kubectl apply.
func MetricsReaderRBAC(id *Identity) string {
	return clusterRole(id, "schedq-metrics-reader", fmt.Sprintf("- nonResourceURLs: [%q]\n  verbs: [\"get\"]\n", MetricsPath))
}

// EKSMetricsReaderRBAC returns the minimal ClusterRole and
// ClusterRoleBinding that let id get the scheduler's metrics through EKS's
// metrics API (get on ksh/metrics in API group metrics.eks.amazonaws.com).
func EKSMetricsReaderRBAC(id *Identity) string {
	return clusterRole(id, "schedq-eks-metrics-reader",
		fmt.Sprintf("- apiGroups: [%q]\n  resources: [%q]\n  verbs: [\"get\"]\n", EKSMetricsGroup, EKSSchedulerMetricsResource))
}

// clusterRole is a ClusterRole with rules and its ClusterRoleBinding to id.
func clusterRole(id *Identity, name, rules string) string {
	subject, suffix := rbacSubject(id)
	return fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: %[1]s
rules:
%[4]s---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: %[1]s-%[2]s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: %[1]s
subjects:
%[3]s`, name, suffix, subject, rules)
}

// PortForwardRBAC returns the minimal Role and RoleBinding in namespace that
// let id find the scheduler pods there, their leader (Lease
// leaseNamespace/leaseName) and port-forward to them. A Lease in another
// namespace gets a Role of its own there.
func PortForwardRBAC(id *Identity, namespace, leaseNamespace, leaseName string) string {
	subject, suffix := rbacSubject(id)
	name := "schedq-scheduler-portforward"
	leaseRule := fmt.Sprintf(`- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  resourceNames: ["%s"]
  verbs: ["get"]
`, leaseName)
	rules := `- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list"]
- apiGroups: [""]
  resources: ["pods/portforward"]
  verbs: ["get", "create"]
`
	var extra string
	if leaseNamespace == namespace {
		rules += leaseRule
	} else {
		extra = "---\n" + role(name+"-lease", leaseNamespace, leaseRule, subject, suffix)
	}
	return role(name, namespace, rules, subject, suffix) + extra
}

// role is a Role with rules in namespace and its RoleBinding to subject.
func role(name, namespace, rules, subject, suffix string) string {
	return fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: %[1]s
  namespace: %[4]s
rules:
%[5]s---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: %[1]s-%[2]s
  namespace: %[4]s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: %[1]s
subjects:
%[3]s`, name, suffix, subject, namespace, rules)
}

var nonNameChars = regexp.MustCompile(`[^a-z0-9.-]+`)

// rbacSubject is the YAML subject for id and a name suffix for the binding.
func rbacSubject(id *Identity) (subject, suffix string) {
	user := "YOUR-USER"
	if id != nil && id.Username != "" {
		user = id.Username
	}
	if parts := strings.Split(user, ":"); len(parts) == 4 && parts[0] == "system" && parts[1] == "serviceaccount" {
		return fmt.Sprintf("- kind: ServiceAccount\n  name: %s\n  namespace: %s\n", parts[3], parts[2]),
			sanitizeName(parts[2] + "-" + parts[3])
	}
	return fmt.Sprintf("- apiGroup: rbac.authorization.k8s.io\n  kind: User\n  name: %q\n", user), sanitizeName(user)
}

func sanitizeName(s string) string {
	s = strings.Trim(nonNameChars.ReplaceAllString(strings.ToLower(s), "-"), "-.")
	if len(s) > 200 {
		s = s[:200]
	}
	if s == "" {
		s = "user"
	}
	return s
}
