package runner

import (
	"context"
	"fmt"
	"math"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

func parseGroupVersion(apiVersion string) (schema.GroupVersion, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return gv, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	return gv, nil
}

// resourceFor returns the client for obj's resource in namespace, checking
// the namespace against the resource's scope.
func (e *executor) resourceFor(obj *unstructured.Unstructured, namespace, what string) (dynamic.ResourceInterface, schema.GroupVersionResource, error) {
	m, err := e.restMapping(obj.GetAPIVersion(), obj.GetKind())
	if err != nil {
		return nil, schema.GroupVersionResource{}, err
	}
	namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace
	switch {
	case namespace != "" && !namespaced:
		return nil, m.Resource, fmt.Errorf("namespace %q set for %q, but %q has scope %q", namespace, what, m.GroupVersionKind, m.Scope.Name())
	case namespace == "" && namespaced:
		return nil, m.Resource, fmt.Errorf("namespace not set for %q, but %q has scope %q", what, m.GroupVersionKind, m.Scope.Name())
	case namespaced:
		return e.dynamic.Resource(m.Resource).Namespace(namespace), m.Resource, nil
	default:
		return e.dynamic.Resource(m.Resource), m.Resource, nil
	}
}

// churn is upstream's runChurnOp: a background goroutine creates (and in
// recreate mode deletes) one object per template every interval until the
// workload ends.
func (e *executor) churn(ctx context.Context, op *workload.Churn) error {
	if err := e.createNamespace(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: op.Namespace}}); err != nil {
		return fmt.Errorf("unable to create namespace %v: %w", op.Namespace, err)
	}
	type churnFn func(name string) string
	var fns []churnFn
	for i, tmpl := range op.Objects {
		m, err := e.restMapping(tmpl.GetAPIVersion(), tmpl.GetKind())
		if err != nil {
			return fmt.Errorf("template %d (%s): %w", i, op.TemplatePaths[i], err)
		}
		ns := ""
		var res dynamic.ResourceInterface = e.dynamic.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ns = op.Namespace
			res = e.dynamic.Resource(m.Resource).Namespace(ns)
		}
		gvr := m.Resource
		tmpl := tmpl
		fns = append(fns, func(name string) string {
			if name != "" {
				if err := res.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) {
					e.bgError(op, fmt.Errorf("unable to delete %v: %w", name, err))
				}
				e.opts.Ledger.Remove(ObjectRef{Resource: gvr, Namespace: ns, Name: name})
				return ""
			}
			obj := tmpl.DeepCopy()
			obj.SetLabels(e.withRunLabels(obj.GetLabels()))
			live, err := res.Create(ctx, obj, metav1.CreateOptions{})
			if err != nil {
				return "" // upstream ignores failed creates
			}
			e.opts.Ledger.Add(ObjectRef{Resource: gvr, Namespace: ns, Name: live.GetName()})
			return live.GetName()
		})
	}
	ticker := time.NewTicker(op.Interval)
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		defer ticker.Stop()
		switch op.Mode {
		case workload.ChurnCreate:
			limit := op.Number
			if limit == 0 {
				limit = math.MaxInt32
			}
			for count := 0; count < limit; count++ {
				select {
				case <-ctx.Done():
					return
				case <-ticker.C:
				}
				for _, fn := range fns {
					fn("")
				}
			}
		case workload.ChurnRecreate:
			names := make([][]string, len(fns))
			for i := range names {
				names[i] = make([]string, op.Number)
			}
			for count := 0; ; count++ {
				select {
				case <-ctx.Done():
					return
				case <-ticker.C:
				}
				for i, fn := range fns {
					slot := count % op.Number
					names[i][slot] = fn(names[i][slot])
				}
			}
		}
	}()
	return nil
}

// createAny is upstream's createAny: Count objects from the template,
// created with fieldValidation=Strict, each retried for 20 s.
func (e *executor) createAny(ctx context.Context, op *workload.CreateAny, stat *OpStat) (string, error) {
	if op.Namespace != "" {
		if err := e.ensureNamespace(ctx, op.Namespace); err != nil {
			return "", err
		}
	}
	for i := 0; i < op.Count; i++ {
		obj, err := op.Object(i)
		if err != nil {
			return "", fmt.Errorf("%s: %w", op.TemplatePath, err)
		}
		obj.SetLabels(e.withRunLabels(obj.GetLabels()))
		rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		var lastErr error
		for {
			res, gvr, err := e.resourceFor(obj, op.Namespace, op.TemplatePath)
			if err == nil {
				var live *unstructured.Unstructured
				live, err = res.Create(rctx, obj, metav1.CreateOptions{FieldValidation: "Strict"})
				if err == nil {
					e.opts.Ledger.Add(ObjectRef{Resource: gvr, Namespace: op.Namespace, Name: live.GetName()})
					break
				}
			}
			lastErr = err
			select {
			case <-rctx.Done():
				cancel()
				return "", fmt.Errorf("%s: timed out while creating %s, last error was: %w", op.TemplatePath, objName(obj), lastErr)
			case <-time.After(time.Second):
			}
		}
		cancel()
		stat.Created++
	}
	return fmt.Sprintf("%d objects", op.Count), nil
}

func objName(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() != "" {
		return obj.GetNamespace() + "/" + obj.GetName()
	}
	return obj.GetName()
}

// updateAny is upstream's updateAny: Update (on Subresources when given)
// and UpdateStatus of Count objects rendered from the template, all at once
// or UpdatePerSecond per second. An object the run created keeps the run's
// labels.
func (e *executor) updateAny(ctx context.Context, op *workload.UpdateAny) (string, error) {
	if op.Namespace != "" {
		if err := e.ensureNamespace(ctx, op.Namespace); err != nil {
			return "", err
		}
	}
	var tick <-chan time.Time
	if op.UpdatePerSecond > 0 {
		t := time.NewTicker(time.Second / time.Duration(op.UpdatePerSecond))
		defer t.Stop()
		tick = t.C
	}
	for i := 0; i < op.Count; i++ {
		if tick != nil {
			select {
			case <-ctx.Done():
				return "", nil
			case <-tick:
			}
		}
		obj, err := op.Object(i)
		if err != nil {
			return "", fmt.Errorf("%s: %w", op.TemplatePath, err)
		}
		res, _, err := e.resourceFor(obj, op.Namespace, op.TemplatePath)
		if err != nil {
			return "", err
		}
		if e.isRunObject(ctx, res, obj.GetName()) {
			obj.SetLabels(e.withRunLabels(obj.GetLabels()))
		}
		opts := metav1.UpdateOptions{FieldValidation: "Strict"}
		if _, err := res.Update(ctx, obj, opts, op.Subresources...); err != nil {
			return "", fmt.Errorf("failed to update object %s: %w", objName(obj), err)
		}
		if _, err := res.UpdateStatus(ctx, obj, opts); err != nil {
			return "", fmt.Errorf("failed to update object status %s: %w", objName(obj), err)
		}
	}
	return fmt.Sprintf("%d objects", op.Count), nil
}

// isRunObject reports whether the live object carries the run's labels.
func (e *executor) isRunObject(ctx context.Context, res dynamic.ResourceInterface, name string) bool {
	live, err := res.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	for k, v := range e.opts.Labels {
		if live.GetLabels()[k] != v {
			return false
		}
	}
	return true
}

// restMapping maps an object's kind to its resource.
func (e *executor) restMapping(apiVersion, kind string) (*meta.RESTMapping, error) {
	gv, err := parseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	m, err := e.mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	if err != nil {
		e.mapper.Reset()
		return nil, fmt.Errorf("failed mapping %s %s to a resource: %w", apiVersion, kind, err)
	}
	return m, nil
}
