package gather

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// sharer keeps once what many listed pods and events hold alike: the pods of
// one workload have the same containers' requests, tolerations, node
// selector, priority and scheduler, their events the same reason and
// message. Decoding gives each object its own copies, which at 50,000
// pending pods are a good part of what explain holds; the objects it returns
// point at one copy of each. explain only reads them.
type sharer struct {
	strs        map[string]string
	containers  map[string][]corev1.Container
	tolerations map[string][]corev1.Toleration
	selectors   map[string]map[string]string
	priorities  map[int32]*int32
	key         []byte // scratch
}

func newSharer() *sharer {
	return &sharer{
		strs:        map[string]string{},
		containers:  map[string][]corev1.Container{},
		tolerations: map[string][]corev1.Toleration{},
		selectors:   map[string]map[string]string{},
		priorities:  map[int32]*int32{},
	}
}

// str returns the kept copy of s.
func (sh *sharer) str(s string) string {
	if k, ok := sh.strs[s]; ok {
		return k
	}
	sh.strs[s] = s
	return s
}

// pod shares p's fields (p as slimPod left it) and returns p.
func (sh *sharer) pod(p *corev1.Pod) *corev1.Pod {
	p.Namespace = sh.str(p.Namespace)
	p.Spec.SchedulerName = sh.str(p.Spec.SchedulerName)
	if p.Spec.Priority != nil {
		v := *p.Spec.Priority
		if k, ok := sh.priorities[v]; ok {
			p.Spec.Priority = k
		} else {
			sh.priorities[v] = p.Spec.Priority
		}
	}
	p.Spec.Containers = sh.containerList(p.Spec.Containers)
	p.Spec.InitContainers = sh.containerList(p.Spec.InitContainers)
	p.Spec.Tolerations = sh.tolerationList(p.Spec.Tolerations)
	p.Spec.NodeSelector = sh.selector(p.Spec.NodeSelector)
	for i := range p.Status.Conditions {
		c := &p.Status.Conditions[i]
		c.Type = corev1.PodConditionType(sh.str(string(c.Type)))
		c.Status = corev1.ConditionStatus(sh.str(string(c.Status)))
		c.Reason, c.Message = sh.str(c.Reason), sh.str(c.Message)
	}
	return p
}

// event shares e's strings and returns e.
func (sh *sharer) event(e corev1.Event) corev1.Event {
	e.Namespace = sh.str(e.Namespace)
	e.InvolvedObject.Kind = sh.str(e.InvolvedObject.Kind)
	e.InvolvedObject.Namespace = sh.str(e.InvolvedObject.Namespace)
	e.Reason, e.Message, e.Type = sh.str(e.Reason), sh.str(e.Message), sh.str(e.Type)
	return e
}

// containerList returns the kept copy of cs (names and requests, as
// slimContainers leaves them).
func (sh *sharer) containerList(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return cs
	}
	b := sh.key[:0]
	for _, c := range cs {
		b = append(append(b, c.Name...), 0)
		names := make([]string, 0, len(c.Resources.Requests))
		for n := range c.Resources.Requests {
			names = append(names, string(n))
		}
		slices.Sort(names)
		for _, n := range names {
			q := c.Resources.Requests[corev1.ResourceName(n)]
			b = append(append(append(append(b, n...), '='), q.String()...), 0)
		}
		b = append(b, 1)
	}
	sh.key = b
	return keep(sh.containers, b, cs)
}

// tolerationList returns the kept copy of ts.
func (sh *sharer) tolerationList(ts []corev1.Toleration) []corev1.Toleration {
	if len(ts) == 0 {
		return ts
	}
	b := sh.key[:0]
	for _, t := range ts {
		b = append(append(b, t.Key...), 0)
		b = append(append(b, t.Operator...), 0)
		b = append(append(b, t.Value...), 0)
		b = append(append(b, t.Effect...), 0)
		if t.TolerationSeconds != nil {
			b = strconv.AppendInt(b, *t.TolerationSeconds, 10)
		}
		b = append(b, 1)
	}
	sh.key = b
	return keep(sh.tolerations, b, ts)
}

// selector returns the kept copy of m.
func (sh *sharer) selector(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := sh.key[:0]
	for _, k := range keys {
		b = append(append(append(append(b, k...), 0), m[k]...), 0)
	}
	sh.key = b
	return keep(sh.selectors, b, m)
}

// keep returns the value kept under key, keeping v there if none is.
func keep[T any](m map[string]T, key []byte, v T) T {
	if k, ok := m[string(key)]; ok {
		return k
	}
	m[string(key)] = v
	return v
}
