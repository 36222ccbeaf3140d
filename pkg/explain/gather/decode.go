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

// The generated decoder checks the wire type of every field it reads;
// these do the same for the fields read here.

// read hands the bytes of the length-delimited f to fn (a generated
// decoder's Unmarshal, or one of this file's).
func (f field) read(what string, fn func([]byte) error) error {
	if f.typ != protowire.BytesType {
		return fmt.Errorf("proto: %s: wrong wire type %d", what, f.typ)
	}
	return fn(f.b)
}

// str sets *to to the length-delimited f, a string.
func (f field) str(what string, to *string) error {
	return f.read(what, func(b []byte) error {
		*to = string(b)
		return nil
	})
}

// int32 is the varint f, truncated as the generated decoder truncates.
func (f field) int32(what string) (int32, error) {
	if f.typ != protowire.VarintType {
		return 0, fmt.Errorf("proto: %s: wrong wire type %d", what, f.typ)
	}
	return int32(f.x), nil
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
			return f.read("Unknown.raw", func(b []byte) error {
				raw = b
				return nil
			})
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
			return f.read("list metadata", func(b []byte) error {
				return eachField(b, func(g field) error {
					if g.num == 3 {
						return g.str("ListMeta.continue", &p.cont)
					}
					return nil
				})
			})
		case 2: // items
			return f.read("list items", func(b []byte) error {
				p.items = append(p.items, b)
				return nil
			})
		}
		return nil
	})
	return p, err
}

// decodePod decodes what slimPod keeps of a pod.
func decodePod(b []byte) (*corev1.Pod, error) {
	p := &corev1.Pod{}
	err := eachField(b, func(f field) error {
		switch f.num {
		case 1:
			return f.read("Pod.metadata", func(b []byte) error { return decodeMeta(b, &p.ObjectMeta, true) })
		case 2:
			return f.read("Pod.spec", func(b []byte) error { return decodePodSpec(b, &p.Spec) })
		case 3:
			return f.read("Pod.status", func(b []byte) error { return decodePodStatus(b, &p.Status) })
		}
		return nil
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
		case 1:
			return f.str("ObjectMeta.name", &m.Name)
		case 3:
			return f.str("ObjectMeta.namespace", &m.Namespace)
		case 5:
			return f.read("ObjectMeta.uid", func(b []byte) error {
				m.UID = types.UID(b)
				return nil
			})
		case 6:
			return f.str("ObjectMeta.resourceVersion", &m.ResourceVersion)
		case 8:
			if times {
				return f.read("ObjectMeta.creationTimestamp", m.CreationTimestamp.Unmarshal)
			}
		case 9:
			if times {
				if m.DeletionTimestamp == nil {
					m.DeletionTimestamp = &metav1.Time{}
				}
				return f.read("ObjectMeta.deletionTimestamp", m.DeletionTimestamp.Unmarshal)
			}
		}
		return nil
	})
}

func decodePodSpec(b []byte, s *corev1.PodSpec) error {
	return eachField(b, func(f field) error {
		switch f.num {
		case 10:
			return f.str("PodSpec.nodeName", &s.NodeName)
		case 19:
			return f.str("PodSpec.schedulerName", &s.SchedulerName)
		case 25:
			v, err := f.int32("PodSpec.priority")
			if err == nil {
				s.Priority = &v
			}
			return err
		case 2:
			return f.read("PodSpec.containers", func(b []byte) error { return appendContainer(&s.Containers, b) })
		case 20:
			return f.read("PodSpec.initContainers", func(b []byte) error { return appendContainer(&s.InitContainers, b) })
		case 7: // a map entry: key 1, value 2
			return f.read("PodSpec.nodeSelector", func(b []byte) error {
				var k, v string
				err := eachField(b, func(g field) error {
					switch g.num {
					case 1:
						return g.str("PodSpec.nodeSelector", &k)
					case 2:
						return g.str("PodSpec.nodeSelector", &v)
					}
					return nil
				})
				if err == nil {
					if s.NodeSelector == nil {
						s.NodeSelector = map[string]string{}
					}
					s.NodeSelector[k] = v
				}
				return err
			})
		case 32: // a map entry: key 1, value 2
			return f.read("PodSpec.overhead", func(b []byte) error {
				var k string
				v := &resource.Quantity{}
				err := eachField(b, func(g field) error {
					switch g.num {
					case 1:
						return g.str("PodSpec.overhead", &k)
					case 2:
						v = &resource.Quantity{}
						return g.read("PodSpec.overhead", v.Unmarshal)
					}
					return nil
				})
				if err == nil {
					if s.Overhead == nil {
						s.Overhead = corev1.ResourceList{}
					}
					s.Overhead[corev1.ResourceName(k)] = *v
				}
				return err
			})
		case 18: // affinity: decodePod keeps its node affinity
			if s.Affinity == nil {
				s.Affinity = &corev1.Affinity{}
			}
			return f.read("PodSpec.affinity", s.Affinity.Unmarshal)
		case 22:
			s.Tolerations = append(s.Tolerations, corev1.Toleration{})
			return f.read("PodSpec.tolerations", s.Tolerations[len(s.Tolerations)-1].Unmarshal)
		case 38:
			s.SchedulingGates = append(s.SchedulingGates, corev1.PodSchedulingGate{})
			return f.read("PodSpec.schedulingGates", s.SchedulingGates[len(s.SchedulingGates)-1].Unmarshal)
		case 40:
			if s.Resources == nil {
				s.Resources = &corev1.ResourceRequirements{}
			}
			return f.read("PodSpec.resources", s.Resources.Unmarshal)
		case 43:
			if s.SchedulingGroup == nil {
				s.SchedulingGroup = &corev1.PodSchedulingGroup{}
			}
			return f.read("PodSpec.schedulingGroup", s.SchedulingGroup.Unmarshal)
		}
		return nil
	})
}

// appendContainer appends a container's name and requests to cs.
func appendContainer(cs *[]corev1.Container, b []byte) error {
	var c corev1.Container
	var res corev1.ResourceRequirements // merged over repeats, as the generated decoder does
	err := eachField(b, func(f field) error {
		switch f.num {
		case 1:
			return f.str("Container.name", &c.Name)
		case 8:
			return f.read("Container.resources", res.Unmarshal)
		}
		return nil
	})
	if err == nil {
		c.Resources = corev1.ResourceRequirements{Requests: res.Requests}
		*cs = append(*cs, c)
	}
	return err
}

// decodePodStatus reads the phase and the PodScheduled condition.
func decodePodStatus(b []byte, s *corev1.PodStatus) error {
	return eachField(b, func(f field) error {
		switch f.num {
		case 1:
			return f.read("PodStatus.phase", func(b []byte) error {
				s.Phase = corev1.PodPhase(b)
				return nil
			})
		case 2:
			var c corev1.PodCondition
			err := f.read("PodStatus.conditions", c.Unmarshal)
			if err == nil && c.Type == corev1.PodScheduled {
				s.Conditions = []corev1.PodCondition{c}
			}
			return err
		}
		return nil
	})
}

// decodeEvent decodes what slimEvent keeps of an event.
func decodeEvent(b []byte) (corev1.Event, error) {
	var e corev1.Event
	var ref corev1.ObjectReference // merged over repeats, as the generated decoder does
	err := eachField(b, func(f field) error {
		switch f.num {
		case 1:
			return f.read("Event.metadata", func(b []byte) error { return decodeMeta(b, &e.ObjectMeta, false) })
		case 2:
			return f.read("Event.involvedObject", ref.Unmarshal)
		case 3:
			return f.str("Event.reason", &e.Reason)
		case 4:
			return f.str("Event.message", &e.Message)
		case 6:
			return f.read("Event.firstTimestamp", e.FirstTimestamp.Unmarshal)
		case 7:
			return f.read("Event.lastTimestamp", e.LastTimestamp.Unmarshal)
		case 8:
			v, err := f.int32("Event.count")
			e.Count = v
			return err
		case 9:
			return f.str("Event.type", &e.Type)
		case 10:
			return f.read("Event.eventTime", e.EventTime.Unmarshal)
		case 11:
			if e.Series == nil {
				e.Series = &corev1.EventSeries{}
			}
			return f.read("Event.series", e.Series.Unmarshal)
		}
		return nil
	})
	e.InvolvedObject = corev1.ObjectReference{Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, UID: ref.UID}
	return e, err
}
