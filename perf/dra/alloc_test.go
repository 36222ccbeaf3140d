package dra

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

const driver = "test-driver.cdi.k8s.io"

var runLabels = map[string]string{runner.RunLabelKey: "test"}

func claim(name string, labels map[string]string) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "init", Labels: labels, ResourceVersion: "1"},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name: "req-0", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "test-class", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
		}}}},
	}
}

// cluster is one node whose ResourceSlice has devices devices, the class
// that selects them, and the claims.
func cluster(devices int, claims ...*resourceapi.ResourceClaim) *fake.Clientset {
	slice := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "slice-0"},
		Spec: resourceapi.ResourceSliceSpec{
			Driver:   driver,
			Pool:     resourceapi.ResourcePool{Name: "pool-0", ResourceSliceCount: 1},
			NodeName: new("node-0"),
		},
	}
	for i := range devices {
		slice.Spec.Devices = append(slice.Spec.Devices, resourceapi.Device{Name: fmt.Sprintf("device-%d", i)})
	}
	objs := []runtime.Object{
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0"}},
		&resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "test-class"}, Spec: resourceapi.DeviceClassSpec{
			Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "` + driver + `"`}}},
		}},
		slice,
	}
	for _, c := range claims {
		objs = append(objs, c)
	}
	client := fake.NewClientset(objs...)
	// The API server bumps the version on a write; the assume cache needs it.
	client.PrependReactor("update", "resourceclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
		a.(k8stesting.UpdateAction).GetObject().(metav1.Object).SetResourceVersion("2")
		return false, nil, nil
	})
	return client
}

func env(client *fake.Clientset) runner.OpEnv {
	return runner.OpEnv{Client: client, RunLabels: labels.SelectorFromSet(runLabels), Warnf: func(string, ...any) {}}
}

// TestAllocResourceClaims checks upstream's op: each of the run's
// unallocated claims gets a device of its own on the node that has them,
// in its status; a claim of someone else stays unallocated.
func TestAllocResourceClaims(t *testing.T) {
	client := cluster(3, claim("a", runLabels), claim("b", runLabels), claim("other", nil))
	summary, err := AllocResourceClaims(context.Background(), env(client), "init")
	if err != nil {
		t.Fatal(err)
	}
	if summary != "2 claims allocated" {
		t.Errorf("summary %q, want 2 claims allocated", summary)
	}
	devices := sets.New[string]()
	for _, name := range []string{"a", "b", "other"} {
		c, err := client.ResourceV1().ResourceClaims("init").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if name == "other" {
			if c.Status.Allocation != nil {
				t.Errorf("claim other, not the run's, was allocated: %+v", c.Status.Allocation)
			}
			continue
		}
		if c.Status.Allocation == nil || len(c.Status.Allocation.Devices.Results) != 1 {
			t.Fatalf("claim %s: allocation %+v, want one device", name, c.Status.Allocation)
		}
		r := c.Status.Allocation.Devices.Results[0]
		if r.Driver != driver || r.Pool != "pool-0" {
			t.Errorf("claim %s: result %+v", name, r)
		}
		devices.Insert(r.Device)
	}
	if devices.Len() != 2 {
		t.Errorf("devices %v, want two distinct ones", sets.List(devices))
	}
}

// TestAllocResourceClaims_noDevices checks that a claim no node can satisfy
// fails the op, as upstream's Fatalf does.
func TestAllocResourceClaims_noDevices(t *testing.T) {
	client := cluster(1, claim("a", runLabels), claim("b", runLabels))
	_, err := AllocResourceClaims(context.Background(), env(client), "init")
	if err == nil || !strings.Contains(err.Error(), "could not allocate claim 1 out of 2 (init/b) on any of 1 nodes") {
		t.Errorf("error = %v, want the claim that found no device", err)
	}
}
