package gather

import (
	"bytes"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A lean decoder of the API server's protobuf pod and event lists: it reads
// what slimPod and slimEvent keep and steps over the rest (managed fields,
// labels, annotations, volumes, containers' commands and env, statuses)
// without decoding it. The generated decoder builds every object whole
// before slimPod trims it, and at 5,000 pods that and the garbage it leaves
// were a third of explain's CPU. The parts explain keeps whole (affinity,
// tolerations, requests, conditions, times) go to the generated decoders of
// their types. TestLeanDecodeMatchesGenerated and FuzzLeanDecode hold it to
// the generated decoder followed by slimPod and slimEvent.

// protoMagic starts every protobuf body of the API server: a
// runtime.Unknown envelope follows.
var protoMagic = []byte("k8s\x00")

// errNotProtobuf: the body is not the API server's protobuf (a proxy
// answered JSON): the generated path decodes it.
var errNotProtobuf = errors.New("not a protobuf body")

// field is one field of a message as it is read.
type field struct {
	num protowire.Number
	typ protowire.Type
	b   []byte // the bytes of a length-delimited field
	x   uint64 // the value of a varint
}

// eachField calls fn with every field of the message b, in order.
func eachField(b []byte, fn func(f field) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		f := field{num: num, typ: typ}
		switch typ {
		case protowire.BytesType:
			f.b, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			f.x, n = protowire.ConsumeVarint(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// bytesField checks that f is length-delimited, as the generated decoder
// does for the fields read here.
func (f field) bytesField(what string) error {
	if f.typ != protowire.BytesType {
		return fmt.Errorf("proto: %s: wrong wire type %d", what, f.typ)
	}
	return nil
}

func (f field) varintField(what string) error {
	if f.typ != protowire.VarintType {
		return fmt.Errorf("proto: %s: wrong wire type %d", what, f.typ)
	}
	return nil
}

// listPage is one page of a list: its continue token and its items, each
// the bytes of one object.
type listPage struct {
	cont  string
	items [][]byte
}

// parseListPage reads the envelope and the list around the items: the
// items themselves are decoded by the one that takes the page.
func parseListPage(body []byte) (*listPage, error) {
	if !bytes.HasPrefix(body, protoMagic) {
		return nil, errNotProtobuf
	}
	var raw []byte
	err := eachField(body[len(protoMagic):], func(f field) error {
		switch f.num {
		case 2: // raw
			raw = f.b
			return f.bytesField("Unknown.raw")
		case 3: // contentEncoding
			if len(f.b) > 0 {
				return fmt.Errorf("proto: content encoding %q", f.b)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	p := &listPage{}
	err = eachField(raw, func(f field) error {
		switch f.num {
		case 1: // metadata
			if err := f.bytesField("list metadata"); err != nil {
				return err
			}
			return eachField(f.b, func(g field) error {
				if g.num == 3 { // continue
					if err := g.bytesField("ListMeta.continue"); err != nil {
						return err
					}
					p.cont = string(g.b)
				}
				return nil
			})
		case 2: // items
			p.items = append(p.items, f.b)
			return f.bytesField("list items")
		}
		return nil
	})
	return p, err
}

// decodePod decodes what slimPod keeps of a pod.
func decodePod(b []byte) (*corev1.Pod, error) {
	p := &corev1.Pod{}
	err := eachField(b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			if err = f.bytesField("Pod.metadata"); err == nil {
				err = decodeMeta(f.b, &p.ObjectMeta, true)
			}
		case 2:
			if err = f.bytesField("Pod.spec"); err == nil {
				err = decodePodSpec(f.b, &p.Spec)
			}
		case 3:
			if err = f.bytesField("Pod.status"); err == nil {
				err = decodePodStatus(f.b, &p.Status)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if a := p.Spec.Affinity; a != nil {
		p.Spec.Affinity = nil
		if a.NodeAffinity != nil {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: a.NodeAffinity}
		}
	}
	if len(p.Spec.Containers) == 0 {
		p.Spec.Containers = nil
	}
	if len(p.Spec.InitContainers) == 0 {
		p.Spec.InitContainers = nil
	}
	return p, nil
}

// decodeMeta reads an object's name, namespace, uid and resourceVersion,
// and with times its creation and deletion times.
func decodeMeta(b []byte, m *metav1.ObjectMeta, times bool) error {
	return eachField(b, func(f field) error {
		switch f.num {
		case 1, 3, 5, 6:
			if err := f.bytesField("ObjectMeta"); err != nil {
				return err
			}
			switch s := string(f.b); f.num {
			case 1:
				m.Name = s
			case 3:
				m.Namespace = s
			case 5:
				m.UID = types.UID(s)
			case 6:
				m.ResourceVersion = s
			}
		case 8:
			if !times {
				return nil
			}
			if err := f.bytesField("ObjectMeta.creationTimestamp"); err != nil {
				return err
			}
			return m.CreationTimestamp.Unmarshal(f.b)
		case 9:
			if !times {
				return nil
			}
			if err := f.bytesField("ObjectMeta.deletionTimestamp"); err != nil {
				return err
			}
			if m.DeletionTimestamp == nil {
				m.DeletionTimestamp = &metav1.Time{}
			}
			return m.DeletionTimestamp.Unmarshal(f.b)
		}
		return nil
	})
}

func decodePodSpec(b []byte, s *corev1.PodSpec) error {
	return eachField(b, func(f field) error {
		switch f.num {
		case 10, 19: // nodeName, schedulerName
			if err := f.bytesField("PodSpec"); err != nil {
				return err
			}
			if f.num == 10 {
				s.NodeName = string(f.b)
			} else {
				s.SchedulerName = string(f.b)
			}
		case 25: // priority
			if err := f.varintField("PodSpec.priority"); err != nil {
				return err
			}
			v := int32(f.x)
			s.Priority = &v
		case 2, 20: // containers, initContainers
			if err := f.bytesField("PodSpec.containers"); err != nil {
				return err
			}
			c, err := decodeContainer(f.b)
			if err != nil {
				return err
			}
			if f.num == 2 {
				s.Containers = append(s.Containers, c)
			} else {
				s.InitContainers = append(s.InitContainers, c)
			}
		case 7: // nodeSelector
			if err := f.bytesField("PodSpec.nodeSelector"); err != nil {
				return err
			}
			if s.NodeSelector == nil {
				s.NodeSelector = map[string]string{}
			}
			var k, v string
			err := eachField(f.b, func(g field) error {
				if g.num != 1 && g.num != 2 {
					return nil
				}
				if err := g.bytesField("PodSpec.nodeSelector"); err != nil {
					return err
				}
				if g.num == 1 {
					k = string(g.b)
				} else {
					v = string(g.b)
				}
				return nil
			})
			if err != nil {
				return err
			}
			s.NodeSelector[k] = v
		case 32: // overhead
			if err := f.bytesField("PodSpec.overhead"); err != nil {
				return err
			}
			if s.Overhead == nil {
				s.Overhead = corev1.ResourceList{}
			}
			var k string
			v := &resource.Quantity{}
			err := eachField(f.b, func(g field) error {
				switch g.num {
				case 1:
					if err := g.bytesField("PodSpec.overhead"); err != nil {
						return err
					}
					k = string(g.b)
				case 2:
					if err := g.bytesField("PodSpec.overhead"); err != nil {
						return err
					}
					v = &resource.Quantity{}
					return v.Unmarshal(g.b)
				}
				return nil
			})
			if err != nil {
				return err
			}
			s.Overhead[corev1.ResourceName(k)] = *v
		case 18: // affinity: its node affinity is kept
			if err := f.bytesField("PodSpec.affinity"); err != nil {
				return err
			}
			a := &corev1.Affinity{}
			if s.Affinity != nil {
				a = s.Affinity
			}
			if err := a.Unmarshal(f.b); err != nil {
				return err
			}
			s.Affinity = a
		case 22: // tolerations
			if err := f.bytesField("PodSpec.tolerations"); err != nil {
				return err
			}
			s.Tolerations = append(s.Tolerations, corev1.Toleration{})
			return s.Tolerations[len(s.Tolerations)-1].Unmarshal(f.b)
		case 38: // schedulingGates
			if err := f.bytesField("PodSpec.schedulingGates"); err != nil {
				return err
			}
			s.SchedulingGates = append(s.SchedulingGates, corev1.PodSchedulingGate{})
			return s.SchedulingGates[len(s.SchedulingGates)-1].Unmarshal(f.b)
		case 40: // resources
			if err := f.bytesField("PodSpec.resources"); err != nil {
				return err
			}
			if s.Resources == nil {
				s.Resources = &corev1.ResourceRequirements{}
			}
			return s.Resources.Unmarshal(f.b)
		case 43: // schedulingGroup
			if err := f.bytesField("PodSpec.schedulingGroup"); err != nil {
				return err
			}
			if s.SchedulingGroup == nil {
				s.SchedulingGroup = &corev1.PodSchedulingGroup{}
			}
			return s.SchedulingGroup.Unmarshal(f.b)
		}
		return nil
	})
}

// decodeContainer reads a container's name and requests.
func decodeContainer(b []byte) (corev1.Container, error) {
	var c corev1.Container
	var res corev1.ResourceRequirements
	err := eachField(b, func(f field) error {
		switch f.num {
		case 1:
			if err := f.bytesField("Container.name"); err != nil {
				return err
			}
			c.Name = string(f.b)
		case 8:
			if err := f.bytesField("Container.resources"); err != nil {
				return err
			}
			return res.Unmarshal(f.b)
		}
		return nil
	})
	c.Resources = corev1.ResourceRequirements{Requests: res.Requests}
	return c, err
}

// decodePodStatus reads the phase and the PodScheduled condition.
func decodePodStatus(b []byte, s *corev1.PodStatus) error {
	return eachField(b, func(f field) error {
		switch f.num {
		case 1:
			if err := f.bytesField("PodStatus.phase"); err != nil {
				return err
			}
			s.Phase = corev1.PodPhase(f.b)
		case 2:
			if err := f.bytesField("PodStatus.conditions"); err != nil {
				return err
			}
			var c corev1.PodCondition
			if err := c.Unmarshal(f.b); err != nil {
				return err
			}
			if c.Type == corev1.PodScheduled {
				s.Conditions = []corev1.PodCondition{c}
			}
		}
		return nil
	})
}

// decodeEvent decodes what slimEvent keeps of an event.
func decodeEvent(b []byte) (corev1.Event, error) {
	var e corev1.Event
	var ref corev1.ObjectReference // merged over repeats, as the generated decoder does
	err := eachField(b, func(f field) error {
		if f.num == 8 { // count
			if err := f.varintField("Event.count"); err != nil {
				return err
			}
			e.Count = int32(f.x)
			return nil
		}
		switch f.num {
		case 1, 2, 3, 4, 6, 7, 9, 10, 11:
			if err := f.bytesField("Event"); err != nil {
				return err
			}
		}
		switch f.num {
		case 1:
			return decodeMeta(f.b, &e.ObjectMeta, false)
		case 2:
			return ref.Unmarshal(f.b)
		case 3:
			e.Reason = string(f.b)
		case 4:
			e.Message = string(f.b)
		case 6:
			return e.FirstTimestamp.Unmarshal(f.b)
		case 7:
			return e.LastTimestamp.Unmarshal(f.b)
		case 9:
			e.Type = string(f.b)
		case 10:
			return e.EventTime.Unmarshal(f.b)
		case 11:
			if e.Series == nil {
				e.Series = &corev1.EventSeries{}
			}
			return e.Series.Unmarshal(f.b)
		}
		return nil
	})
	e.InvolvedObject = corev1.ObjectReference{Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, UID: ref.UID}
	return e, err
}
