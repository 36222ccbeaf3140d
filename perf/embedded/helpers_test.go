package embedded

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
)

// startForTest starts a control plane whose logs are shown only when the
// test fails, and stops it at the end of the test.
func startForTest(t *testing.T, opts Options) *ControlPlane {
	t.Helper()
	logs := &testsupport.TailBuffer{Max: 64 << 10}
	if !opts.LogToFile {
		opts.LogOutput = logs
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("control plane logs (tail):\n%s", logs)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	t.Logf("control plane ready in %v (%s): %s, metrics %s, queue %s", cp.StartDuration.Round(time.Millisecond), FormatStartPhases(cp.StartPhases), cp.APIServerURL, cp.MetricsURL, cp.QueueURL)
	return cp
}

// eventually polls cond every 20 ms until it returns "" or timeout passes,
// then fails with cond's last complaint.
func eventually(t *testing.T, timeout time.Duration, cond func() string) {
	t.Helper()
	testsupport.Eventually(t, timeout, 20*time.Millisecond, cond)
}

// testPod is a pod asking for 100m CPU, optionally with a node selector.
func testPod(name string, nodeSelector map[string]string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: v1.PodSpec{
			NodeSelector: nodeSelector,
			Containers: []v1.Container{{
				Name:  "c",
				Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU:    resource.MustParse("100m"),
					v1.ResourceMemory: resource.MustParse("64Mi"),
				}},
			}},
		},
	}
}

func createPods(t *testing.T, client kubernetes.Interface, prefix string, n int, nodeSelector map[string]string) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := client.CoreV1().Pods(metav1.NamespaceDefault).Create(context.Background(), testPod(fmt.Sprintf("%s-%d", prefix, i), nodeSelector), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// waitBound waits until every pod whose name starts with prefix is bound.
func waitBound(t *testing.T, client kubernetes.Interface, prefix string, n int, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, func() string {
		pods, err := client.CoreV1().Pods(metav1.NamespaceDefault).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		bound := 0
		for _, p := range pods.Items {
			if strings.HasPrefix(p.Name, prefix+"-") && p.Spec.NodeName != "" {
				bound++
			}
		}
		if bound != n {
			return fmt.Sprintf("%d of %d %s-* pods bound", bound, n, prefix)
		}
		return ""
	})
}

// scrape GETs the scheduler's /metrics with config's credentials and returns
// the status code and, on 200, the parsed families.
func scrape(t *testing.T, url string, config *rest.Config) (int, map[string]*dto.MetricFamily) {
	t.Helper()
	client, err := MetricsClient(config)
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	var body bytes.Buffer
	if _, err := body.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(&body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return resp.StatusCode, families
}

// metricValue sums the values of the series of name whose labels include
// every pair of labels.
func metricValue(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	var sum float64
	for _, m := range families[name].GetMetric() {
		match := 0
		for _, lp := range m.GetLabel() {
			if v, ok := labels[lp.GetName()]; ok && v == lp.GetValue() {
				match++
			}
		}
		if match != len(labels) {
			continue
		}
		switch {
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Untyped != nil:
			sum += m.GetUntyped().GetValue()
		}
	}
	return sum
}

// skipIfShort skips tests that start a control plane.
func skipIfShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a control plane; skipped with -short")
	}
}

// emptyDir fails unless dir has no entries.
func emptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) > 0 {
		t.Errorf("%s is not empty after Stop: %v", dir, names)
	}
}
