package flushdemo_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics/testutil"

	"k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/perf/embedded"
	"github.com/kubectl-schedq/kubectl-schedq/perf/flushdemo"
)

const enableFlushDemo = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      filter:
        enabled:
          - name: ` + flushdemo.Name + `
`

// TestPlugin_podsWaitForTheFlush runs the plugin in the embedded scheduler:
// the pods it rejected stay unschedulable after a node gains its label (no
// event moves them) and are bound right after the leftover flush, which
// scheduler_pod_scheduled_after_flush_total counts.
func TestPlugin_podsWaitForTheFlush(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane and waits for a leftover flush (up to 30s); skipped with -short")
	}
	logs := &testsupport.TailBuffer{Max: 64 << 10}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := embedded.Start(ctx, embedded.Options{
		Nodes:                             2,
		SchedulerConfigData:               []byte(enableFlushDemo),
		OutOfTreePlugins:                  runtime.Registry{flushdemo.Name: flushdemo.New},
		PodMaxInUnschedulablePodsDuration: time.Second,
		LogOutput:                         logs,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if t.Failed() {
			t.Logf("control plane logs (tail):\n%s", logs)
		}
	})
	client := cp.Client()
	before, err := testutil.GetCounterMetricValue(metrics.PodScheduledAfterFlush)
	if err != nil {
		t.Fatal(err)
	}

	const held = 3
	for i := range held {
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("held-%d", i), Namespace: metav1.NamespaceDefault, Labels: map[string]string{flushdemo.PodLabel: "yes"}},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}}}},
		}
		if _, err := client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// pods returns how many of the held pods are bound, and how many the
	// plugin's rejection holds.
	pods := func() (bound, rejected int) {
		list, err := client.CoreV1().Pods(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{LabelSelector: flushdemo.PodLabel})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list.Items {
			if p.Spec.NodeName != "" {
				bound++
			}
			for _, c := range p.Status.Conditions {
				if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && strings.Contains(c.Message, flushdemo.ErrReason) {
					rejected++
				}
			}
		}
		return bound, rejected
	}
	testsupport.Eventually(t, 30*time.Second, 50*time.Millisecond, func() string {
		if bound, rejected := pods(); bound != 0 || rejected != held {
			return fmt.Sprintf("%d bound, %d rejected by %s; want 0 and %d", bound, rejected, flushdemo.Name, held)
		}
		return ""
	})

	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, flushdemo.NodeLabel)
	if _, err := client.CoreV1().Nodes().Patch(ctx, nodes.Items[0].Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	labelled := time.Now()
	// The flush runs every 30 s and moves pods parked over 1 s.
	testsupport.Eventually(t, 45*time.Second, 100*time.Millisecond, func() string {
		if bound, _ := pods(); bound != held {
			return fmt.Sprintf("%d of %d pods bound %v after a node gained %s", bound, held, time.Since(labelled).Round(time.Second), flushdemo.NodeLabel)
		}
		return ""
	})
	after, err := testutil.GetCounterMetricValue(metrics.PodScheduledAfterFlush)
	if err != nil {
		t.Fatal(err)
	}
	if got := after - before; got != held {
		t.Errorf("scheduler_pod_scheduled_after_flush_total rose by %v, want %d: the label's event moved pods the plugin does not requeue", got, held)
	}
	t.Logf("%d pods bound %v after the label, each right after the flush", held, time.Since(labelled).Round(time.Second))
}
