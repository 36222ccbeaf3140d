package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Template is an object template file (nodeTemplatePath, podTemplatePath,
// defaultPodTemplatePath, createAny, updateAny and createPodGroups'
// templatePath): a Go text/template rendered with .Index, .Count, the op's
// templateParams and upstream's functions (see TemplateFuncs), then read as
// YAML with unknown fields rejected.
//
// Upstream v1.37 renders these files with text/template (v1.36 used
// html/template, which escaped "<" to "&lt;"); so does this package.
//
// A Template is safe for concurrent use.
type Template struct {
	// Path is the file, as resolved.
	Path string
	tmpl *template.Template
	// static is true when the file has no actions: every index renders the
	// same text, so decoded objects are cached and copied.
	static bool
	cache  runtime.Object
}

// ParseTemplate parses a template file's content; path names it in errors.
func ParseTemplate(path string, content []byte) (*Template, error) {
	tmpl, err := template.New(filepath.Base(path)).Funcs(TemplateFuncs()).Parse(string(content))
	if err != nil {
		return nil, fromContent(err)
	}
	t := &Template{Path: path, tmpl: tmpl, static: true}
	if tmpl.Tree != nil && tmpl.Tree.Root != nil {
		for _, n := range tmpl.Tree.Root.Nodes {
			if n.Type() != parse.NodeText {
				t.static = false
				break
			}
		}
	}
	if len(tmpl.Templates()) > 1 {
		t.static = false
	}
	return t, nil
}

// Render executes the template with .Index=index and .Count=count.
func (t *Template) Render(index, count int) ([]byte, error) {
	return t.render(templateData(nil, index, count))
}

func (t *Template) render(data map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	if err := t.tmpl.Execute(&buf, data); err != nil {
		return nil, fromContent(err)
	}
	return buf.Bytes(), nil
}

// templateData is upstream's template environment: the op's params, then
// Index and Count (count < 0 leaves .Count out, as createPodGroups does).
func templateData(params map[string]any, index, count int) map[string]any {
	data := make(map[string]any, len(params)+2)
	maps.Copy(data, params)
	data["Index"] = index
	if count >= 0 {
		data["Count"] = count
	}
	return data
}

// where says which rendering of the template failed.
func where(data map[string]any) string {
	if _, ok := data["Count"]; !ok {
		return fmt.Sprintf(".Index=%v", data["Index"])
	}
	return fmt.Sprintf(".Index=%v, .Count=%v", data["Index"], data["Count"])
}

// decode renders the template into obj (a typed object such as *v1.Pod),
// strictly, as upstream's getSpecFromTextTemplateFile does.
func (t *Template) decode(data map[string]any, obj runtime.Object) error {
	if t.static && t.cache != nil {
		return copyInto(t.cache, obj)
	}
	b, err := t.render(data)
	if err != nil {
		return fmt.Errorf("%s: %w", t.Path, err)
	}
	if err := unmarshalStrict(b, obj); err != nil {
		return fmt.Errorf("%s (%s): %w", t.Path, where(data), err)
	}
	return nil
}

// warm checks that the template renders with data into a fresh object from
// newObj and, for a static template, caches that object.
func (t *Template) warm(data map[string]any, newObj func() runtime.Object) error {
	obj := newObj()
	if err := t.decode(data, obj); err != nil {
		return err
	}
	if t.static {
		t.cache = obj
	}
	return nil
}

func (t *Template) unstructured(data map[string]any) (*unstructured.Unstructured, error) {
	if t.static && t.cache != nil {
		return t.cache.(*unstructured.Unstructured).DeepCopy(), nil
	}
	b, err := t.render(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Path, err)
	}
	// Upstream decodes into a *unstructured.Unstructured through
	// yaml.UnmarshalStrict, which needs apiVersion and kind.
	var obj *unstructured.Unstructured
	if err := unmarshalStrict(b, &obj); err != nil {
		return nil, fmt.Errorf("%s (%s): %w", t.Path, where(data), err)
	}
	if obj == nil {
		return nil, fmt.Errorf("%s (%s): renders to no object", t.Path, where(data))
	}
	return obj, nil
}

func (t *Template) warmUnstructured(data map[string]any) error {
	obj, err := t.unstructured(data)
	if err != nil {
		return err
	}
	if t.static {
		t.cache = obj
	}
	return nil
}

func copyInto(src, dst runtime.Object) error {
	switch d := dst.(type) {
	case *v1.Pod:
		src.(*v1.Pod).DeepCopyInto(d)
	case *v1.Node:
		src.(*v1.Node).DeepCopyInto(d)
	case *schedulingv1beta1.PodGroup:
		src.(*schedulingv1beta1.PodGroup).DeepCopyInto(d)
	default:
		return fmt.Errorf("cannot copy %T", dst)
	}
	return nil
}

// TemplateFuncs are the functions upstream's object templates may call:
// AddInt, AddFloat, SubtractInt, SubtractFloat, MultiplyInt, MultiplyFloat,
// DivideInt, DivideFloat, Mod and Int take any number type or a numeric
// string; anything else, and division by zero, fails the render. JSON
// prints a value as JSON (for templateParams holding lists or maps).
func TemplateFuncs() template.FuncMap {
	return template.FuncMap{
		"AddFloat":      addFloat,
		"AddInt":        addInt,
		"DivideFloat":   divideFloat,
		"DivideInt":     divideInt,
		"Int":           toInt,
		"JSON":          toJSON,
		"Mod":           mod,
		"MultiplyFloat": multiplyFloat,
		"MultiplyInt":   multiplyInt,
		"SubtractFloat": subtractFloat,
		"SubtractInt":   subtractInt,
	}
}

// The functions panic like upstream's; text/template turns a panic in a
// function into an execution error.

func toFloat64(val any) float64 {
	switch i := val.(type) {
	case float64:
		return i
	case float32:
		return float64(i)
	case int64:
		return float64(i)
	case int32:
		return float64(i)
	case int:
		return float64(i)
	case uint64:
		return float64(i)
	case uint32:
		return float64(i)
	case uint:
		return float64(i)
	case string:
		f, err := strconv.ParseFloat(i, 64)
		if err == nil {
			return f
		}
	}
	panic(fmt.Sprintf("cannot cast %v to float64", val))
}

func toInt(val any) int {
	switch i := val.(type) {
	case float64:
		return int(i)
	case float32:
		return int(i)
	case int64:
		return int(i)
	case int32:
		return int(i)
	case int:
		return i
	case uint64:
		return int(i)
	case uint32:
		return int(i)
	case uint:
		return int(i)
	case string:
		v, err := strconv.Atoi(i)
		if err == nil {
			return v
		}
	}
	panic(fmt.Sprintf("cannot cast %v to int", val))
}

func toJSON(val any) string {
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(val); err != nil {
		panic(fmt.Sprintf("cannot JSON-encode %v: %v", val, err))
	}
	return strings.TrimSpace(buf.String())
}

func addInt(numbers ...any) int { return int(addFloat(numbers...)) }

func subtractInt(i, j any) int { return int(subtractFloat(i, j)) }

func multiplyInt(numbers ...any) int { return int(multiplyFloat(numbers...)) }

func divideInt(i, j any) int { return int(divideFloat(i, j)) }

func addFloat(numbers ...any) float64 {
	sum := 0.0
	for _, number := range numbers {
		sum += toFloat64(number)
	}
	return sum
}

func subtractFloat(i, j any) float64 { return toFloat64(i) - toFloat64(j) }

func multiplyFloat(numbers ...any) float64 {
	product := 1.0
	for _, number := range numbers {
		product *= toFloat64(number)
	}
	return product
}

func divideFloat(i, j any) float64 {
	typedI := toFloat64(i)
	typedJ := toFloat64(j)
	if typedJ == 0 {
		panic("division by zero")
	}
	return typedI / typedJ
}

func mod(a, b any) int {
	return int(toFloat64(a)) % int(toFloat64(b))
}

// DefaultPauseImage is the image of DefaultPod (upstream's
// imageutils.GetE2EImage(imageutils.Pause)).
const DefaultPauseImage = "registry.k8s.io/pause:3.10.2"

// DefaultNode is upstream's makeBaseNode: the node createNodes creates when
// it has no nodeTemplatePath. 4 CPU, 32Gi memory, 110 pods, Ready, named by
// generateName with namePrefix (createNodes uses node-<opIndex>-).
func DefaultNode(namePrefix string) *v1.Node {
	list := func() v1.ResourceList {
		return v1.ResourceList{
			v1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
			v1.ResourceCPU:    resource.MustParse("4"),
			v1.ResourceMemory: resource.MustParse("32Gi"),
		}
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{GenerateName: namePrefix},
		Status: v1.NodeStatus{
			Capacity:    list(),
			Allocatable: list(),
			Phase:       v1.NodeRunning,
			Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		},
	}
}

// DefaultPod is upstream's makeBasePod: the pod createPods creates when
// neither the op nor the test case names a template. One pause container
// requesting (and limited to) 100m CPU and 500Mi memory, generateName pod-.
func DefaultPod() *v1.Pod {
	list := func() v1.ResourceList {
		return v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse("100m"),
			v1.ResourceMemory: resource.MustParse("500Mi"),
		}
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "pod-"},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{
				Name:      "pause",
				Image:     DefaultPauseImage,
				Ports:     []v1.ContainerPort{{ContainerPort: 80}},
				Resources: v1.ResourceRequirements{Limits: list(), Requests: list()},
			}},
		},
	}
}
