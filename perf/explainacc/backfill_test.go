package explainacc

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
)

// parkedState is what park waits on: how many pods the scheduler tried
// (PodScheduled False, Unschedulable), and which of those have no
// FailedScheduling event yet, with the message of their condition.
type parkedState struct {
	tried   int
	missing []*corev1.Pod
	events  int // FailedScheduling events, of any pod
}

// parkedPods lists pods in pages of 500 and FailedScheduling events in
// pages of 5,000: the events come from etcd, where a page costs time in
// proportion to all of them (see explain's eventChunkSize), and a poll in
// pages of 500 would keep the API server busy while the scheduler parks.
func parkedPods(ctx context.Context, client kubernetes.Interface) (parkedState, error) {
	withEvent := map[string]bool{}
	events := 0
	if _, err := eachEventPage(ctx, client, 5000, func(evs *corev1.EventList) {
		events += len(evs.Items)
		for _, e := range evs.Items {
			withEvent[e.InvolvedObject.Namespace+"/"+e.InvolvedObject.Name] = true
		}
	}); err != nil {
		return parkedState{}, err
	}
	s := parkedState{events: events}
	opts := metav1.ListOptions{FieldSelector: "spec.nodeName=", Limit: 500}
	for {
		pods, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, opts)
		if err != nil {
			return parkedState{}, err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
					s.tried++
					if !withEvent[p.Namespace+"/"+p.Name] {
						s.missing = append(s.missing, p)
					}
				}
			}
		}
		if pods.Continue == "" {
			return s, nil
		}
		opts.Continue = pods.Continue
	}
}

// eachEventPage lists every FailedScheduling event in pages of size and
// hands fn each page; it returns the number of pages.
func eachEventPage(ctx context.Context, client kubernetes.Interface, size int64, fn func(*corev1.EventList)) (pages int, err error) {
	opts := metav1.ListOptions{FieldSelector: "reason=" + explain.FailedSchedulingReason, Limit: size}
	for {
		l, err := client.CoreV1().Events(metav1.NamespaceAll).List(ctx, opts)
		if err != nil {
			return pages, err
		}
		pages++
		fn(l)
		if l.Continue == "" {
			return pages, nil
		}
		opts.Continue = l.Continue
	}
}

// backfillEvents writes, for pods the scheduler tried whose event its
// recorder dropped (it drops events when a burst overflows its queue), the
// FailedScheduling event it would have written: events.k8s.io/v1, from
// default-scheduler, its note the message of the pod's PodScheduled
// condition (the scheduler writes both from one message).
func backfillEvents(ctx context.Context, client kubernetes.Interface, pods []*corev1.Pod) error {
	work := make(chan *corev1.Pod)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				msg := ""
				for _, c := range p.Status.Conditions {
					if c.Type == corev1.PodScheduled {
						msg = c.Message
					}
				}
				now := time.Now()
				ev := &eventsv1.Event{
					ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", p.Name, now.UnixNano()), Namespace: p.Namespace},
					EventTime:           metav1.NewMicroTime(now),
					ReportingController: "default-scheduler",
					ReportingInstance:   "default-scheduler-backfill",
					Action:              "Scheduling",
					Reason:              explain.FailedSchedulingReason,
					Regarding:           corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.Namespace, Name: p.Name, UID: p.UID, ResourceVersion: p.ResourceVersion},
					Note:                msg,
					Type:                corev1.EventTypeWarning,
				}
				if _, err := client.EventsV1().Events(p.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
					select {
					case errs <- fmt.Errorf("event for %s/%s: %w", p.Namespace, p.Name, err):
					default:
					}
				}
			}
		}()
	}
	for _, p := range pods {
		work <- p
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}
