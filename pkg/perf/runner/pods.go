package runner

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// createPods is upstream's runCreatePodsOp.
func (e *executor) createPods(ctx context.Context, op *workload.CreatePods, p *OpProgress, stat *OpStat) (string, error) {
	if err := e.ensureNamespace(ctx, op.Namespace); err != nil {
		return "", err
	}
	if op.CollectMetrics {
		// The window keeps the workload's name for the namespace, so that
		// runs compare whatever their namespaces were called.
		if err := e.startWindow(ctx, strings.TrimPrefix(op.Namespace, e.opts.NamespacePrefix), []string{op.Namespace}, nil); err != nil {
			return "", err
		}
	}
	stopCount := e.tracker.listen(func(pod *v1.Pod, _ time.Time) {
		if pod.Namespace == op.Namespace {
			p.Bound.Add(1)
		}
	})
	defer stopCount()

	if !op.SteadyState {
		if err := e.createPodBatch(ctx, op, op.Count, p, stat); err != nil {
			return "", err
		}
	}
	var summary string
	switch {
	case op.SkipWaitToCompletion:
		e.podsPerNamespace[op.Namespace] += op.Count
		summary = creationSummary(stat)
	case op.SteadyState:
		n, err := e.createPodsSteadily(ctx, op, p, stat)
		if err != nil {
			return "", err
		}
		summary = fmt.Sprintf("%d pods bound; %s", n, creationSummary(stat))
	default:
		if err := e.waitScheduled(ctx, op.Namespace, nil, op.Count, p); err != nil {
			return "", fmt.Errorf("error in waiting for pods to get scheduled: %w", err)
		}
		summary = fmt.Sprintf("%d pods bound; %s", op.Count, creationSummary(stat))
	}
	if op.CollectMetrics {
		summary += "; " + e.windowSummary()
		if err := e.stopWindow(ctx, op); err != nil {
			return "", err
		}
	}
	return summary, nil
}

func creationSummary(stat *OpStat) string {
	if stat.Created == 0 {
		return "none created"
	}
	return fmt.Sprintf("%d created in %.2fs (%.0f pods/s)", stat.Created, stat.CreateSeconds, stat.CreateRate)
}

// createPodBatch creates count pods of op with Options.Parallelism
// goroutines (upstream's testutils.CreatePod: 30), pod i rendered with
// .Index=i and .Count=count. It stops at the first error.
func (e *executor) createPodBatch(ctx context.Context, op *workload.CreatePods, count int, p *OpProgress, stat *OpStat) error {
	if count == 0 {
		return nil
	}
	e.opts.Ledger.AddPodNamespace(op.Namespace)
	began := time.Now()
	created, firstErr := createInParallel(ctx, e.opts.Parallelism, count, func(ctx context.Context, i int) error {
		if err := e.createPod(ctx, op, i, count); err != nil {
			return err
		}
		p.Created.Add(1)
		return nil
	})
	took := time.Since(began)
	stat.Created += created
	stat.CreateSeconds += took.Seconds()
	if stat.CreateSeconds > 0 {
		stat.CreateRate = float64(stat.Created) / stat.CreateSeconds
	}
	if firstErr != nil {
		return firstErr
	}
	if err := context.Cause(ctx); err != nil && created < count {
		return err
	}
	return nil
}

// createPod creates pod index of a batch of count, with its PV and PVC when
// the op has them, and records when the request was sent.
func (e *executor) createPod(ctx context.Context, op *workload.CreatePods, index, count int) error {
	pod, err := op.Pod(index, count)
	if err != nil {
		return fmt.Errorf("pod %d: %w", index, err)
	}
	pod.Labels = e.withRunLabels(pod.Labels)
	if op.PersistentVolumeClaim != nil {
		if err := e.createVolume(ctx, op, index, pod); err != nil {
			return err
		}
	}
	for attempt := 0; ; attempt++ {
		sent := time.Now()
		got, err := e.client.CoreV1().Pods(op.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		switch {
		case err == nil:
			e.tracker.setCreated(op.Namespace, got.Name, sent)
			return nil
		case apierrors.IsAlreadyExists(err) && pod.Name == "" && pod.GenerateName != "" && attempt < 5:
			continue // a generated name was taken: try another
		case apierrors.IsAlreadyExists(err):
			return nil // upstream's CreatePodWithRetries accepts it
		default:
			return fmt.Errorf("create pod %d in namespace %s: %w", index, op.Namespace, err)
		}
	}
}

// createVolume is upstream's CreatePodWithPersistentVolume with bindVolume:
// PVC pvc-<i> and PV <namespace>-vol-<i>, pre-bound to each other, and the
// claim mounted as the pod's only volume "vol".
func (e *executor) createVolume(ctx context.Context, op *workload.CreatePods, index int, pod *v1.Pod) error {
	ns := op.Namespace
	pvcName := fmt.Sprintf("pvc-%d", index)
	pvc := op.PersistentVolumeClaim.DeepCopy()
	pvc.Name = pvcName
	pvc.Labels = e.withRunLabels(pvc.Labels)
	pv := op.PersistentVolume.DeepCopy()
	if pv == nil {
		return fmt.Errorf("pod %d: a persistentVolumeClaimTemplatePath needs a persistentVolumeTemplatePath", index)
	}
	volumeID := fmt.Sprintf("vol-%d", index)
	pv.Name = ns + "-" + volumeID
	pv.Labels = e.withRunLabels(pv.Labels)
	if pv.Spec.CSI != nil {
		pv.Spec.CSI.VolumeHandle = pv.Name
	} else if pv.Spec.AWSElasticBlockStore != nil {
		pv.Spec.AWSElasticBlockStore.VolumeID = volumeID
	}
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: ns, Name: pvcName, APIVersion: "v1"}
	pv.Status.Phase = v1.VolumeBound
	pvc.Spec.VolumeName = pv.Name
	pvc.Status.Phase = v1.ClaimBound

	gotPVC, err := e.client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("error creating PVC %s/%s: %w", ns, pvcName, err)
	}
	e.opts.Ledger.Add(ObjectRef{Resource: v1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), Namespace: ns, Name: pvcName})
	if gotPVC != nil {
		gotPVC.Status = pvc.Status
		if _, err := e.client.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(ctx, gotPVC, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("error updating PVC status %s/%s: %w", ns, pvcName, err)
		}
	}
	gotPV, err := e.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("error creating PV %s: %w", pv.Name, err)
	}
	e.opts.Ledger.Add(ObjectRef{Resource: v1.SchemeGroupVersion.WithResource("persistentvolumes"), Name: pv.Name})
	if gotPV != nil {
		gotPV.Status = pv.Status
		if _, err := e.client.CoreV1().PersistentVolumes().UpdateStatus(ctx, gotPV, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("error updating PV status %s: %w", pv.Name, err)
		}
	}
	pod.Spec.Volumes = []v1.Volume{{
		Name:         "vol",
		VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: pvcName}},
	}}
	return nil
}

// createPodsSteadily is upstream's createPodsSteadily: create Count pods,
// and each time Count more of them got bound delete the namespace's pods
// and create a new batch, for Duration. It returns how many pods got bound.
func (e *executor) createPodsSteadily(ctx context.Context, op *workload.CreatePods, p *OpProgress, stat *OpStat) (int, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, op.Duration, fmt.Errorf("the operation ran for the configured %s", op.Duration))
	defer cancel()
	var (
		mu      sync.Mutex
		pending int
	)
	notify := make(chan struct{}, 1)
	stop := e.tracker.listen(func(pod *v1.Pod, _ time.Time) {
		if pod.Namespace != op.Namespace {
			return
		}
		mu.Lock()
		pending++
		mu.Unlock()
		select {
		case notify <- struct{}{}:
		default:
		}
	})
	defer stop()

	if err := e.createPodBatch(ctx, op, op.Count, p, stat); err != nil && ctx.Err() == nil {
		return 0, fmt.Errorf("create initial %d pods: %w", op.Count, err)
	}
	scheduled := 0
	for {
		select {
		case <-ctx.Done():
			if scheduled == 0 {
				return 0, errors.New("no pod at all got scheduled, either because of a problem or because the test interval was too small")
			}
			return scheduled, nil
		case <-notify:
		}
		mu.Lock()
		n := pending
		pending = 0
		mu.Unlock()
		batches := (scheduled + n) / op.Count
		batchesBefore := scheduled / op.Count
		scheduled += n
		for b := batchesBefore; b < batches; b++ {
			// All scheduled: start over with a new batch.
			err := e.client.CoreV1().Pods(op.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{
				GracePeriodSeconds: ptr.To(int64(0)),
				PropagationPolicy:  ptr.To(metav1.DeletePropagationBackground),
			}, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(e.opts.Labels).String()})
			if ctx.Err() != nil {
				break
			}
			if err != nil {
				if strings.Contains(err.Error(), "would exceed context deadline") {
					continue
				}
				return scheduled, fmt.Errorf("delete scheduled pods: %w", err)
			}
			p.Created.Store(0)
			p.Bound.Store(0)
			if err := e.createPodBatch(ctx, op, op.Count, p, stat); err != nil && ctx.Err() == nil {
				return scheduled, fmt.Errorf("create next batch of pods: %w", err)
			}
		}
	}
}

// deletePods is upstream's runDeletePodsOp, restricted to the run's pods.
// With no namespace, the pods of every namespace the informer lists are
// deleted namespace by namespace.
func (e *executor) deletePods(ctx context.Context, op *workload.DeletePods) (string, error) {
	pods, err := e.podsIn(op.Namespace, op.LabelSelector)
	if err != nil {
		return "", fmt.Errorf("error in listing pods in the namespace %s: %w", op.Namespace, err)
	}
	selector := labels.SelectorFromSet(e.withRunLabels(op.LabelSelector)).String()
	del := func(ctx context.Context) error {
		if op.DeletePodsPerSecond > 0 {
			t := time.NewTicker(time.Second / time.Duration(op.DeletePodsPerSecond))
			defer t.Stop()
			for _, pod := range pods {
				select {
				case <-ctx.Done():
					return nil
				case <-t.C:
				}
				if err := e.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					if ctx.Err() != nil {
						return nil
					}
					return fmt.Errorf("unable to delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
				}
			}
			return nil
		}
		namespaces := []string{op.Namespace}
		if op.Namespace == "" {
			seen := map[string]bool{}
			namespaces = nil
			for _, pod := range pods {
				if !seen[pod.Namespace] {
					seen[pod.Namespace] = true
					namespaces = append(namespaces, pod.Namespace)
				}
			}
			sort.Strings(namespaces)
		}
		for _, ns := range namespaces {
			err := e.client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("unable to delete pods in namespace %v: %w", ns, err)
			}
		}
		return nil
	}
	if op.SkipWaitToCompletion {
		e.bg.Add(1)
		go func() {
			defer e.bg.Done()
			if err := del(ctx); err != nil {
				e.bgError(op, err)
			}
		}()
		return fmt.Sprintf("deleting %d pods in the background", len(pods)), nil
	}
	if err := del(ctx); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d pods deleted", len(pods)), nil
}
