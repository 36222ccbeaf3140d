package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
)

var explainNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const parkedMetrics = "../../testdata/metrics/v1.36-parked.prom"

// parkedCluster mirrors the recorded exposition: 3 gated pods, 8 pods
// rejected by NodeResourcesFit, 5 pods failing with an error (binding denied).
func parkedCluster(extra int) []runtime.Object {
	var objs []runtime.Object
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(explainNow.Add(-time.Minute))}}
	}
	for i := 0; i < 3; i++ {
		p := pod(fmt.Sprintf("gated-%d", i))
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/hold"}}
		objs = append(objs, p)
	}
	fail := func(p *corev1.Pod, reason, msg string, at time.Time) {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(at)}}
		objs = append(objs, p, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name + ".1"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
			Reason:         explain.FailedSchedulingReason, Message: msg, EventTime: metav1.NewMicroTime(at), Count: 1,
		})
	}
	for i := 0; i < 8+extra; i++ {
		fail(pod(fmt.Sprintf("big-%d", i)), "Unschedulable", "0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.", explainNow.Add(-30*time.Second))
	}
	for i := 0; i < 5; i++ {
		fail(pod(fmt.Sprintf("deny-bind-%d", i)), "SchedulerError", `running Bind plugin "DefaultBinder": admission webhook denied`, explainNow.Add(-300*time.Millisecond))
	}
	return objs
}

func newTestExplain(t *testing.T, objs []runtime.Object, args ...string) (*ExplainOptions, *fake.Clientset, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	tf := testConfigFlags()
	client := fake.NewSimpleClientset(objs...)
	o := NewExplainOptions(tf, streams)
	o.client = client
	o.source = &metricscrape.FileSource{Path: parkedMetrics}
	o.clock = clocktesting.NewFakePassiveClock(explainNow)
	cmd := NewCmdExplain(tf, streams)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	// Bind the parsed flags onto our options (the command made its own).
	o.printFlags = genericclioptions.NewPrintFlags("")
	o.printFlags.NamePrintFlags = nil
	if v, _ := cmd.Flags().GetString("output"); v != "" {
		o.printFlags.OutputFormat = &v
	}
	o.AllNamespaces, _ = cmd.Flags().GetBool("all-namespaces")
	o.NoHeaders, _ = cmd.Flags().GetBool("no-headers")
	o.SortBy, _ = cmd.Flags().GetString("sort-by")
	if err := o.Complete(cmd, cmd.Flags().Args()); err != nil {
		t.Fatal(err)
	}
	return o, client, out, errOut
}

// testConfigFlags is a kubeconfig with namespace "default" and nothing else.
func testConfigFlags() *genericclioptions.TestConfigFlags {
	return genericclioptions.NewTestConfigFlags().WithClientConfig(clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(),
		&clientcmd.ConfigOverrides{Context: clientcmdapi.Context{Namespace: "default"}}))
}

func TestExplainOptions_Validate(t *testing.T) {
	tf := testConfigFlags()
	tests := []struct {
		name    string
		mod     func(o *ExplainOptions)
		wantErr string
	}{
		{"nothing named", func(o *ExplainOptions) {}, "name pods"},
		{"names and selector", func(o *ExplainOptions) { o.podNames = []string{"a"}; o.Selector = "x=y" }, "do not go together"},
		{"names and -A", func(o *ExplainOptions) { o.podNames = []string{"a"}; o.AllNamespaces = true }, "needs a namespace"},
		{"names and a field selector", func(o *ExplainOptions) { o.podNames = []string{"a"}; o.FieldSelector = "status.phase=Pending" }, "--field-selector do not go together"},
		{"bad selector", func(o *ExplainOptions) { o.Selector = "a in (" }, "-l"},
		{"bad field selector", func(o *ExplainOptions) { o.FieldSelector = "status.phase" }, "--field-selector"},
		{"-n alone", func(o *ExplainOptions) { o.namespaceGiven = true }, ""},
		{"a field selector alone", func(o *ExplainOptions) { o.FieldSelector = "spec.nodeName=" }, ""},
		{"no-metrics and a source", func(o *ExplainOptions) { o.AllNamespaces = true; o.NoMetrics = true; o.MetricsURL = "http://x" }, "--no-metrics"},
		{"max below initial", func(o *ExplainOptions) { o.AllNamespaces = true; o.PodMaxBackoff = 0 }, "--pod-max-backoff"},
		{"attempt rate without metrics", func(o *ExplainOptions) { o.AllNamespaces = true; o.NoMetrics = true; o.AttemptRate = true }, "--attempt-rate"},
		{"attempt rate and watch", func(o *ExplainOptions) { o.AllNamespaces = true; o.Watch = true; o.AttemptRate = true }, "--attempt-rate is for a single run"},
		{"ok", func(o *ExplainOptions) { o.AllNamespaces = true }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewExplainOptions(tf, genericiooptions.NewTestIOStreamsDiscard())
			tt.mod(o)
			err := o.Validate()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestExplain_AllNamespacesJSON(t *testing.T) {
	o, _, out, _ := newTestExplain(t, parkedCluster(0), "-A", "-o", "json")
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Items []struct {
			Namespace, Name, Queue string
			Confidence             float64
			Attempts               int
			Reasons                []string
			NextRetry              *struct {
				Earliest, Latest *time.Time
				Triggers         []string
			}
		}
		Counts map[string]int
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	// One vocabulary: upstream's words, as in the table.
	want := map[string]int{"gated": 3, "unschedulablePods": 8, "errorBackoffQ": 5}
	for q, n := range want {
		if got.Counts[q] != n {
			t.Errorf("counts = %v, want %v", got.Counts, want)
			break
		}
	}
	for _, it := range got.Items {
		if it.Namespace == "" || it.Name == "" || it.Queue == "" || it.Reasons == nil {
			t.Errorf("item lacks a stable field: %+v", it)
		}
		if want := map[string]string{"big": "unschedulablePods", "gated": "gated", "deny": "errorBackoffQ"}[strings.SplitN(it.Name, "-", 2)[0]]; it.Queue != want {
			t.Errorf("%s: queue %q, want %q", it.Name, it.Queue, want)
		}
		// The deny-bind pods' binding failures move the big ones out of
		// unschedulablePods for a retry each: very likely, not certainly, parked.
		if strings.HasPrefix(it.Name, "big-") && (it.Confidence < 0.95 || it.Confidence >= 1 || it.NextRetry == nil || it.NextRetry.Latest == nil || len(it.NextRetry.Triggers) == 0) {
			t.Errorf("%s: %+v", it.Name, it)
		}
	}
}

// TestExplain_FixedAPICalls: the same calls for 13 pods as for 113.
func TestExplain_FixedAPICalls(t *testing.T) {
	calls := func(extra int) int {
		o, client, _, _ := newTestExplain(t, parkedCluster(extra), "-A")
		if err := o.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return len(client.Actions())
	}
	small, large := calls(0), calls(100)
	if small != large || small > 3 {
		t.Errorf("API calls: %d for 16 pods, %d for 116 (want the same, at most 3)", small, large)
	}
}

func TestExplain_NamedPods(t *testing.T) {
	o, _, out, _ := newTestExplain(t, parkedCluster(0), "big-1", "missing")
	err := o.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), `"missing" not found`) || !strings.Contains(err.Error(), `namespace "default"`) {
		t.Errorf("error %v, want it to name the missing pod and the namespace", err)
	}
	text := out.String()
	for _, want := range []string{"default/big-1: unschedulablePods", "NodeResourcesFit", "next try:", "NodeAdd"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}

// TestExplain_namespaceAndFieldSelector: -n NAMESPACE alone explains the
// namespace's pending pods, as kubectl get pods -n lists them, and
// --field-selector goes to the pod list, as kubectl passes it.
func TestExplain_namespaceAndFieldSelector(t *testing.T) {
	elsewhere := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "elsewhere", UID: "elsewhere", CreationTimestamp: metav1.NewTime(explainNow.Add(-time.Minute))}}
	tests := []struct {
		name          string
		mod           func(o *ExplainOptions)
		wantSelectors []string // of the pod lists in namespace "default"
		wantErrOut    string
	}{
		{"-n", func(o *ExplainOptions) { o.namespaceGiven = true }, []string{"spec.nodeName="}, "16 pod(s)"},
		{"--field-selector", func(o *ExplainOptions) { o.FieldSelector = "status.phase=Pending" }, []string{"status.phase=Pending"}, "16 pod(s)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, client, out, errOut := newTestExplain(t, append(parkedCluster(0), elsewhere))
			tc.mod(o)
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			if err := o.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			var selectors []string
			for _, a := range client.Actions() {
				if l, ok := a.(k8stesting.ListAction); ok && a.GetResource().Resource == "pods" && a.GetNamespace() == "default" {
					selectors = append(selectors, l.GetListRestrictions().Fields.String())
				}
			}
			if !cmp.Equal(selectors, tc.wantSelectors) {
				t.Errorf("pod lists in namespace default with field selectors %q, want %q", selectors, tc.wantSelectors)
			}
			if strings.Contains(out.String(), "elsewhere") || !strings.Contains(out.String(), "big-0") || !strings.Contains(errOut.String(), tc.wantErrOut) {
				t.Errorf("want the namespace's pods only:\n%s\n%s", out, errOut)
			}
		})
	}
}

func TestExplain_WithoutMetrics(t *testing.T) {
	o, _, out, errOut := newTestExplain(t, parkedCluster(0), "-A", "-o", "wide")
	o.source = failedSource{fmt.Errorf("403 Forbidden: cannot get /metrics")}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "warning: no scheduler metrics (403 Forbidden") {
		t.Errorf("no warning naming the missing metrics: %q", errOut)
	}
	if !strings.Contains(out.String(), "NEXT TRY") || !strings.Contains(out.String(), "RETRY WINDOW") || !strings.Contains(errOut.String(), "gated 3") {
		t.Errorf("wide table lacks its columns, or stderr its counts:\n%s\n%s", out, errOut)
	}
}

// standbySource is a scheduler read while it is not the leader.
type standbySource struct{ metricscrape.Source }

func (s standbySource) Scrape(ctx context.Context) (*metricscrape.Snapshot, error) {
	snap, err := s.Source.Scrape(ctx)
	if err == nil {
		standby := false
		snap.Leader = &standby
		snap.Origin.Pod = "kube-system/kube-scheduler-cp-3"
	}
	return snap, err
}

// TestExplain_standby: the queue of a scheduler that is not the leader (a
// failover under way) holds pods it never tries: explain places them
// without its counts, and says why.
func TestExplain_standby(t *testing.T) {
	o, _, out, errOut := newTestExplain(t, parkedCluster(0), "-A", "-o", "json")
	o.source = standbySource{o.source}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "warning: the scheduler read (kube-system/kube-scheduler-cp-3) is not the leader: its queue is not live") {
		t.Errorf("no warning that the scheduler read is a standby: %q", errOut)
	}
	if !strings.Contains(out.String(), "without the scheduler's metrics (the scheduler read (kube-system/kube-scheduler-cp-3) is not the leader") {
		t.Errorf("the explanations do not say their counts are missing:\n%s", out)
	}
}
