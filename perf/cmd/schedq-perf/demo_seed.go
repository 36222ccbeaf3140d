package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-schedq/kubectl-schedq/perf/embedded"
)

// DemoNamespace holds what demo-seed creates.
const DemoNamespace = "demo"

// newCmdDemoSeed returns `schedq-perf demo-seed`: objects that leave pods in
// every queue of a small cluster (make demo runs it against cluster up).
func newCmdDemoSeed(streams genericiooptions.IOStreams) *cobra.Command {
	var kubeconfig string
	cmd := &cobra.Command{
		Use:   "demo-seed --kubeconfig FILE",
		Short: "Create pods that leave something in every queue of a small cluster",
		Long: `Create, in namespace demo of a cluster with a few 4-CPU nodes (cluster up
--nodes 4): pods that bind, pods asking for 8 CPUs (unschedulablePods), pods
with a scheduling gate (gated), pods whose binding a ValidatingAdmissionPolicy
denies (they fail with an error: errorBackoffQ), and a burst of small pods
(activeQ while the scheduler works through them). The failed bindings raise
AssignedPodDelete events that send the big pods to backoffQ.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if kubeconfig == "" {
				return fmt.Errorf("--kubeconfig is required (the file cluster up wrote)")
			}
			cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
			if err != nil {
				return fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
			}
			cfg.QPS, cfg.Burst = 500, 1000
			client, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			n, err := seedDemo(ctx, client)
			if err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "created %d pods in namespace %s\n", n, DemoNamespace)
			return nil
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the cluster")
	return cmd
}

func demoPod(name string, cpu string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: DemoNamespace, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "pause", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
		}}},
	}
}

func seedDemo(ctx context.Context, c kubernetes.Interface) (int, error) {
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: DemoNamespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return 0, fmt.Errorf("namespace %s: %w", DemoNamespace, err)
	}
	// Bindings of pods named deny-bind-* are refused: the scheduler's bind
	// fails with no rejecting plugin, so those pods back off in the error heap.
	if err := embedded.DenyBinding(ctx, c, "schedq-demo-deny-bind", "deny-bind-", "the demo denies this binding", DemoNamespace); err != nil {
		return 0, err
	}

	var pods []*corev1.Pod
	for i := 0; i < 8; i++ {
		pods = append(pods, demoPod(fmt.Sprintf("web-%d", i), "100m", map[string]string{"app": "web"}))
	}
	for i := 0; i < 6; i++ {
		pods = append(pods, demoPod(fmt.Sprintf("big-%d", i), "8", map[string]string{"app": "big"}))
	}
	for i := 0; i < 3; i++ {
		p := demoPod(fmt.Sprintf("gated-%d", i), "100m", map[string]string{"app": "gated"})
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/approval"}}
		pods = append(pods, p)
	}
	for i := 0; i < 4; i++ {
		pods = append(pods, demoPod(fmt.Sprintf("deny-bind-%d", i), "100m", map[string]string{"app": "deny-bind"}))
	}
	for i := 0; i < 300; i++ {
		pods = append(pods, demoPod(fmt.Sprintf("burst-%03d", i), "40m", map[string]string{"app": "burst"}))
	}
	for _, p := range pods {
		if _, err := c.CoreV1().Pods(DemoNamespace).Create(ctx, p, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return 0, fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	return len(pods), nil
}
