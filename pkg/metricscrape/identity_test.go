package metricscrape

import (
	"context"
	"reflect"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// decodeRBAC splits the YAML documents and decodes the role and binding.
func decodeRBAC(t *testing.T, doc string) (rules []rbacv1.PolicyRule, subjects []rbacv1.Subject, roleRef rbacv1.RoleRef) {
	t.Helper()
	parts := strings.Split(doc, "\n---\n")
	if len(parts) != 2 {
		t.Fatalf("want 2 documents, got %d:\n%s", len(parts), doc)
	}
	var role rbacv1.ClusterRole
	var binding rbacv1.ClusterRoleBinding
	if err := yaml.UnmarshalStrict([]byte(parts[0]), &role); err != nil {
		t.Fatalf("role: %v\n%s", err, parts[0])
	}
	if err := yaml.UnmarshalStrict([]byte(parts[1]), &binding); err != nil {
		t.Fatalf("binding: %v\n%s", err, parts[1])
	}
	if binding.RoleRef.Name != role.Name {
		t.Errorf("binding refers to %q, role is %q", binding.RoleRef.Name, role.Name)
	}
	return role.Rules, binding.Subjects, binding.RoleRef
}

func TestMetricsReaderRBAC(t *testing.T) {
	tests := []struct {
		name string
		id   *Identity
		want rbacv1.Subject
	}{
		{"user", &Identity{Username: "alice@example.com"}, rbacv1.Subject{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "alice@example.com"}},
		{"service account", &Identity{Username: "system:serviceaccount:monitoring:schedq"}, rbacv1.Subject{Kind: "ServiceAccount", Name: "schedq", Namespace: "monitoring"}},
		{"unknown", nil, rbacv1.Subject{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "YOUR-USER"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rules, subjects, ref := decodeRBAC(t, MetricsReaderRBAC(tc.id))
			want := []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}
			if len(rules) != 1 || strings.Join(rules[0].NonResourceURLs, ",") != "/metrics" || strings.Join(rules[0].Verbs, ",") != "get" || len(rules[0].Resources) != 0 {
				t.Errorf("rules = %+v, want %+v", rules, want)
			}
			if len(subjects) != 1 || subjects[0] != tc.want {
				t.Errorf("subjects = %+v, want %+v", subjects, tc.want)
			}
			if ref.Kind != "ClusterRole" {
				t.Errorf("roleRef = %+v", ref)
			}
		})
	}
}

func TestPortForwardRBAC(t *testing.T) {
	tests := []struct {
		name                      string
		namespace, leaseNS, lease string
		wantRules                 string
	}{
		{name: "kubeadm", namespace: "kube-system", leaseNS: "kube-system", lease: "kube-scheduler",
			wantRules: "kube-system: pods:get,list pods/portforward:get,create leases[kube-scheduler]:get"},
		{name: "OpenShift", namespace: "openshift-kube-scheduler", leaseNS: "openshift-kube-scheduler", lease: "kube-scheduler",
			wantRules: "openshift-kube-scheduler: pods:get,list pods/portforward:get,create leases[kube-scheduler]:get"},
		{name: "a Lease in another namespace", namespace: "sched", leaseNS: "kube-system", lease: "second",
			wantRules: "sched: pods:get,list pods/portforward:get,create | kube-system: leases[second]:get"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := PortForwardRBAC(&Identity{Username: "bob"}, tc.namespace, tc.leaseNS, tc.lease)
			parts := strings.Split(doc, "\n---\n")
			if len(parts)%2 != 0 {
				t.Fatalf("%d documents:\n%s", len(parts), doc)
			}
			var roles []string
			for i := 0; i < len(parts); i += 2 {
				var role rbacv1.Role
				var binding rbacv1.RoleBinding
				if err := yaml.UnmarshalStrict([]byte(parts[i]), &role); err != nil {
					t.Fatal(err)
				}
				if err := yaml.UnmarshalStrict([]byte(parts[i+1]), &binding); err != nil {
					t.Fatal(err)
				}
				if binding.Namespace != role.Namespace || binding.RoleRef.Name != role.Name || binding.Subjects[0].Name != "bob" {
					t.Errorf("role %+v, binding %+v", role, binding)
				}
				var got []string
				for _, r := range role.Rules {
					res := strings.Join(r.Resources, ",")
					if len(r.ResourceNames) > 0 {
						res += "[" + strings.Join(r.ResourceNames, ",") + "]"
					}
					got = append(got, res+":"+strings.Join(r.Verbs, ","))
				}
				roles = append(roles, role.Namespace+": "+strings.Join(got, " "))
			}
			if got := strings.Join(roles, " | "); got != tc.wantRules {
				t.Errorf("rules = %s, want %s", got, tc.wantRules)
			}
		})
	}
}

func TestEKSMetricsReaderRBAC(t *testing.T) {
	doc := EKSMetricsReaderRBAC(&Identity{Username: "system:serviceaccount:mon:reader"})
	parts := strings.Split(doc, "\n---\n")
	var role rbacv1.ClusterRole
	var binding rbacv1.ClusterRoleBinding
	if err := yaml.UnmarshalStrict([]byte(parts[0]), &role); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(parts[1]), &binding); err != nil {
		t.Fatal(err)
	}
	want := rbacv1.PolicyRule{APIGroups: []string{"metrics.eks.amazonaws.com"}, Resources: []string{"ksh/metrics"}, Verbs: []string{"get"}}
	if len(role.Rules) != 1 || !reflect.DeepEqual(role.Rules[0], want) {
		t.Errorf("rules = %+v, want %+v", role.Rules, want)
	}
	if s := binding.Subjects; len(s) != 1 || s[0].Kind != "ServiceAccount" || s[0].Namespace != "mon" || s[0].Name != "reader" || binding.RoleRef.Name != role.Name {
		t.Errorf("binding = %+v", binding)
	}
}

func TestWhoAmI_CanGetMetrics(t *testing.T) {
	c := fakeAuthClient("carol", false)
	id, err := WhoAmI(context.Background(), c)
	if err != nil || id.Username != "carol" || id.String() != "carol (groups system:authenticated)" {
		t.Errorf("WhoAmI = %v, %v", id, err)
	}
	ok, err := CanGetMetrics(context.Background(), c)
	if err != nil || ok {
		t.Errorf("CanGetMetrics = %v, %v; want false", ok, err)
	}
}

func TestSanitizeName(t *testing.T) {
	for in, want := range map[string]string{"Alice@Example.com": "alice-example.com", "::": "user", "oidc:bob": "oidc-bob"} {
		if got := sanitizeName(in); got != want {
			t.Errorf("sanitizeName(%q) = %q, want %q", in, got, want)
		}
	}
}
