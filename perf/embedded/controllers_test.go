package embedded

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// claimChildEnv marks the re-run of this test binary that starts a control
// plane with DynamicResourceAllocation on: feature gates are process-global.
const claimChildEnv = "SCHEDQ_EMBEDDED_CLAIM_CHILD"

// TestResourceClaimController checks that a control plane started with
// DynamicResourceAllocation on creates a pod's ResourceClaim from its
// template, as upstream's harness does with its ResourceClaim controller.
func TestResourceClaimController(t *testing.T) {
	skipIfShort(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestResourceClaimControllerChild$", "-test.v", "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), claimChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestResourceClaimControllerChild") {
		t.Fatalf("child process (%v):\n%s", err, out)
	}
}

// TestResourceClaimControllerChild is TestResourceClaimController's process.
func TestResourceClaimControllerChild(t *testing.T) {
	if os.Getenv(claimChildEnv) == "" {
		t.Skip("run by TestResourceClaimController in a process of its own")
	}
	cp := startForTest(t, Options{FeatureGates: map[string]bool{"DynamicResourceAllocation": true}, Nodes: 1})
	client := cp.Client()
	ctx := context.Background()
	template := &resourceapi.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: "default"},
		Spec: resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name: "req-0", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "test-class"},
		}}}}},
	}
	if _, err := client.ResourceV1().ResourceClaimTemplates("default").Create(ctx, template, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := testPod("claimer", nil)
	pod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: new("gpu")}}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() string {
		claims, err := client.ResourceV1().ResourceClaims("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		for _, c := range claims.Items {
			for _, o := range c.OwnerReferences {
				if o.Kind == "Pod" && o.Name == "claimer" {
					return ""
				}
			}
		}
		return "no ResourceClaim owned by pod claimer"
	})
}
