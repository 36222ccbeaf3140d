package gather

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"
)

// randomPods are pods with every field filled at random (conditions of
// type PodScheduled among them), and the bytes the generated encoder makes
// of them.
func randomPods(t testing.TB, seed int64, n int) [][]byte {
	t.Helper()
	return randomPodsFrom(t, randfill.NewWithSeed(seed).NilChance(0.2).NumElements(0, 3).MaxDepth(12), n)
}

// smallPods are randomPods of a few hundred bytes: the fuzzer minimizes
// every input that finds new code for up to a minute, and spends it all on
// inputs of kilobytes.
func smallPods(t testing.TB, seed int64, n int) [][]byte {
	t.Helper()
	return randomPodsFrom(t, randfill.NewWithSeed(seed).NilChance(0.5).NumElements(0, 1).MaxDepth(4), n)
}

func randomPodsFrom(t testing.TB, f *randfill.Filler, n int) [][]byte {
	t.Helper()
	var out [][]byte
	for i := range n {
		var p corev1.Pod
		f.Fill(&p)
		if i%2 == 0 && len(p.Status.Conditions) > 0 {
			p.Status.Conditions[len(p.Status.Conditions)-1].Type = corev1.PodScheduled
		}
		// randfill leaves metav1.Time zero, which encodes as nothing.
		if i%3 == 0 {
			p.CreationTimestamp = metav1.Unix(1_700_000_000+int64(i), int64(i)*1000)
			p.DeletionTimestamp = &metav1.Time{Time: p.CreationTimestamp.Add(time.Minute)}
		}
		b, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func randomEvents(t testing.TB, seed int64, n int) [][]byte {
	t.Helper()
	return randomEventsFrom(t, randfill.NewWithSeed(seed).NilChance(0.2).NumElements(0, 3), n)
}

func randomEventsFrom(t testing.TB, f *randfill.Filler, n int) [][]byte {
	t.Helper()
	var out [][]byte
	for range n {
		var e corev1.Event
		f.Fill(&e)
		e.FirstTimestamp = metav1.Unix(1_700_000_000, 5)
		e.LastTimestamp = metav1.Unix(1_700_000_100, 7)
		b, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// generatedPod is what explain kept before the lean decoder: the generated
// decoder's pod, trimmed by slimPod.
func generatedPod(b []byte) (*corev1.Pod, error) {
	var p corev1.Pod
	if err := p.Unmarshal(b); err != nil {
		return nil, err
	}
	return slimPod(&p), nil
}

func generatedEvent(b []byte) (corev1.Event, error) {
	var e corev1.Event
	if err := e.Unmarshal(b); err != nil {
		return e, err
	}
	return slimEvent(&e), nil
}

// TestLeanDecodeMatchesGenerated: on pods and events with every field
// filled, the lean decoder keeps exactly what the generated decoder and
// slimPod or slimEvent keep.
func TestLeanDecodeMatchesGenerated(t *testing.T) {
	for i, b := range randomPods(t, 1, 500) {
		want, err := generatedPod(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodePod(b)
		if err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("pod %d (-generated +lean):\n%s", i, diff)
		}
	}
	for i, b := range randomEvents(t, 2, 500) {
		want, err := generatedEvent(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeEvent(b)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("event %d (-generated +lean):\n%s", i, diff)
		}
	}
}

// TestParseListPage reads the envelope of a page the way the API server
// writes it: the continue token and each item's bytes.
func TestParseListPage(t *testing.T) {
	items := randomPods(t, 3, 3)
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "next-page"}}
	for _, b := range items {
		var p corev1.Pod
		if err := p.Unmarshal(b); err != nil {
			t.Fatal(err)
		}
		list.Items = append(list.Items, p)
	}
	raw, err := list.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	env, err := (&runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Raw: raw, ContentType: runtime.ContentTypeProtobuf}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	page, err := parseListPage(append(append([]byte{}, protoMagic...), env...))
	if err != nil {
		t.Fatal(err)
	}
	if page.cont != "next-page" || len(page.items) != len(items) {
		t.Fatalf("page: continue %q, %d items; want %q, %d", page.cont, len(page.items), "next-page", len(items))
	}
	for i := range items {
		// The item is the pod's own encoding.
		if !reflect.DeepEqual(page.items[i], items[i]) {
			var p corev1.Pod
			_ = p.Unmarshal(page.items[i])
			if !reflect.DeepEqual(&p, &list.Items[i]) {
				t.Errorf("item %d differs from the pod listed", i)
			}
		}
	}
	if _, err := parseListPage([]byte(`{"kind":"PodList"}`)); err != errNotProtobuf {
		t.Errorf("a JSON body: %v, want errNotProtobuf", err)
	}
}

// FuzzLeanDecode: whatever the bytes, the lean decoder does not panic, and
// where both decoders read a pod or an event they keep the same.
func FuzzLeanDecode(f *testing.F) {
	for _, b := range smallPods(f, 4, 10) {
		f.Add(b)
	}
	for _, b := range randomEventsFrom(f, randfill.NewWithSeed(5).NilChance(0.5).NumElements(0, 1), 10) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if want, err := generatedPod(b); err == nil {
			if got, err := decodePod(b); err == nil && !reflect.DeepEqual(want, got) {
				t.Errorf("pod (-generated +lean):\n%s", cmp.Diff(want, got))
			}
		}
		if want, err := generatedEvent(b); err == nil {
			if got, err := decodeEvent(b); err == nil && !reflect.DeepEqual(want, got) {
				t.Errorf("event (-generated +lean):\n%s", cmp.Diff(want, got))
			}
		}
		_, _ = parseListPage(append(append([]byte{}, protoMagic...), b...))
	})
}

// BenchmarkDecodePod: the lean decoder against the generated one followed
// by slimPod, on a pod as a workload's pending pods are (one container,
// a PodScheduled condition, managed fields, labels).
func BenchmarkDecodePod(b *testing.B) {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u", ResourceVersion: "1",
		CreationTimestamp: metav1.Unix(1_700_000_000, 0), Labels: map[string]string{"app": "a"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: "Update", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:containers":{}}}`)}}}}}
	p.Spec.Containers = []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", Command: []string{"/pause"},
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("6")}}}}
	p.Status.Phase = corev1.PodPending
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/4 nodes are available: 4 Insufficient cpu.", LastTransitionTime: metav1.Unix(1_700_000_001, 0)}}
	raw, err := p.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range []struct {
		name   string
		decode func([]byte) (*corev1.Pod, error)
	}{{"lean", decodePod}, {"generated", generatedPod}} {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.decode(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
