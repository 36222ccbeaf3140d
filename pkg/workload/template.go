package workload

import (
	"bytes"
	"fmt"
	"html/template"
	"path/filepath"
	"strconv"
	"text/template/parse"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Template is an object template file (nodeTemplatePath, podTemplatePath,
// defaultPodTemplatePath, createAny and updateAny's templatePath): a Go
// template rendered with .Index and .Count and upstream's functions (see
// TemplateFuncs), then read as YAML with unknown fields rejected.
//
// Upstream parses these files with html/template, not text/template, so
// values a template prints are HTML-escaped ("<" becomes "&lt;"); so does
// this package, to produce the same objects.
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
		return nil, err
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
	var buf bytes.Buffer
	if err := t.tmpl.Execute(&buf, map[string]any{"Index": index, "Count": count}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decode renders the template into obj (a typed object such as *v1.Pod),
// strictly, as upstream's getSpecFromTextTemplateFile does.
func (t *Template) decode(index, count int, obj runtime.Object) error {
	if t.static && t.cache != nil {
		return copyInto(t.cache, obj)
	}
	b, err := t.Render(index, count)
	if err != nil {
		return fmt.Errorf("%s: %w", t.Path, err)
	}
	if err := unmarshalStrict(b, obj); err != nil {
		return fmt.Errorf("%s (.Index=%d, .Count=%d): %w", t.Path, index, count, err)
	}
	return nil
}

// warm checks that the template renders for (index, count) into a fresh
// object from newObj and, for a static template, caches that object.
func (t *Template) warm(index, count int, newObj func() runtime.Object) error {
	obj := newObj()
	if err := t.decode(index, count, obj); err != nil {
		return err
	}
	if t.static {
		t.cache = obj
	}
	return nil
}

func (t *Template) unstructured(index, count int) (*unstructured.Unstructured, error) {
	if t.static && t.cache != nil {
		return t.cache.(*unstructured.Unstructured).DeepCopy(), nil
	}
	b, err := t.Render(index, count)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Path, err)
	}
	// Upstream decodes into a *unstructured.Unstructured through
	// yaml.UnmarshalStrict, which needs apiVersion and kind.
	var obj *unstructured.Unstructured
	if err := unmarshalStrict(b, &obj); err != nil {
		return nil, fmt.Errorf("%s (.Index=%d, .Count=%d): %w", t.Path, index, count, err)
	}
	if obj == nil {
		return nil, fmt.Errorf("%s (.Index=%d, .Count=%d): renders to no object", t.Path, index, count)
	}
	return obj, nil
}

func (t *Template) warmUnstructured(index, count int) error {
	obj, err := t.unstructured(index, count)
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
	default:
		return fmt.Errorf("cannot copy %T", dst)
	}
	return nil
}

// TemplateFuncs are the functions upstream's object templates may call:
// AddInt, AddFloat, SubtractInt, SubtractFloat, MultiplyInt, MultiplyFloat,
// DivideInt, DivideFloat and Mod. They take any number type or a numeric
// string; anything else, and division by zero, fails the render.
func TemplateFuncs() template.FuncMap {
	return template.FuncMap{
		"AddFloat":      addFloat,
		"AddInt":        addInt,
		"DivideFloat":   divideFloat,
		"DivideInt":     divideInt,
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
// imageutils.GetE2EImage(imageutils.Pause) in v1.36.3).
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

// decodeUnstructuredFile reads a plain YAML object the way upstream's
// getUnstructuredFromFile does (churn templates): strict YAML, then the
// unstructured JSON scheme, which needs apiVersion and kind.
func decodeUnstructuredFile(content []byte) (*unstructured.Unstructured, error) {
	j, err := yaml.YAMLToJSONStrict(content)
	if err != nil {
		return nil, cleanDecodeError(err)
	}
	obj, _, err := unstructured.UnstructuredJSONScheme.Decode(j, nil, nil)
	if err != nil {
		return nil, err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("not a single object (got %T)", obj)
	}
	return u, nil
}
