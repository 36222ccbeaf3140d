package workload

import (
	"fmt"
	"path"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// fileLoader reads the files a Select names, each once.
type fileLoader struct {
	f         *File
	templates map[string]*Template
	warmed    map[string]bool
}

func (l *fileLoader) read(path string) ([]byte, error) {
	return l.f.readFile(path)
}

func (l *fileLoader) template(path string) (*Template, error) {
	if t, ok := l.templates[path]; ok {
		return t, nil
	}
	b, err := l.read(path)
	if err != nil {
		return nil, err
	}
	t, err := ParseTemplate(path, b)
	if err != nil {
		return nil, err
	}
	l.templates[path] = t
	return t, nil
}

// typedTemplate loads a pod, node or pod group template and, when objects
// will be made from it (data is not nil), renders the first with data (once
// per data).
func (l *fileLoader) typedTemplate(path string, data map[string]any, newObj func() runtime.Object) (*Template, error) {
	key := fmt.Sprintf("%s\x00%T", path, newObj())
	t, err := l.variant(path, key)
	if err != nil {
		return nil, err
	}
	if data != nil && l.firstUse(key, data) {
		if err := t.warm(data, newObj); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// objectTemplate is typedTemplate for createAny and updateAny.
func (l *fileLoader) objectTemplate(path string, data map[string]any) (*Template, error) {
	key := path + "\x00unstructured"
	t, err := l.variant(path, key)
	if err != nil {
		return nil, err
	}
	if data != nil && l.firstUse(key, data) {
		if err := t.warmUnstructured(data); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// variant returns the Template for path and one object type: each has its
// own cache of the object a static template renders.
func (l *fileLoader) variant(path, key string) (*Template, error) {
	if t, ok := l.templates[key]; ok {
		return t, nil
	}
	base, err := l.template(path)
	if err != nil {
		return nil, err
	}
	t := &Template{Path: base.Path, tmpl: base.tmpl, static: base.static}
	l.templates[key] = t
	return t, nil
}

// firstUse says whether the template variant key has not been rendered
// with data yet (fmt prints maps sorted by key).
func (l *fileLoader) firstUse(key string, data map[string]any) bool {
	k := fmt.Sprintf("%s\x00%v", key, data)
	if l.warmed[k] {
		return false
	}
	l.warmed[k] = true
	return true
}

// strict reads a plain YAML file into obj with unknown fields rejected.
func (l *fileLoader) strict(path string, obj any) error {
	b, err := l.read(path)
	if err != nil {
		return err
	}
	if err := unmarshalStrict(b, obj); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func (l *fileLoader) unstructured(path string) (*unstructured.Unstructured, error) {
	b, err := l.read(path)
	if err != nil {
		return nil, err
	}
	obj, err := decodeUnstructuredFile(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return obj, nil
}

// DefaultSchedulerConfig is a KubeSchedulerConfiguration with every field
// at kube-scheduler's default: what a workload without schedulerConfigPath
// runs with.
const DefaultSchedulerConfig = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

// schedulerConfig reads the file and checks it is a
// KubeSchedulerConfiguration.
func (l *fileLoader) schedulerConfig(path string) ([]byte, error) {
	b, err := l.read(path)
	if err != nil {
		return nil, err
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(b, &tm); err != nil {
		return nil, fmt.Errorf("%s: %w", path, cleanDecodeError(err))
	}
	if tm.Kind != "KubeSchedulerConfiguration" {
		return nil, fmt.Errorf("%s: kind is %q, want KubeSchedulerConfiguration", path, tm.Kind)
	}
	return b, nil
}

// firstRender is the data of an op's first object, which Select renders to
// check the template; nil when the op makes no objects.
func firstRender(params map[string]any, count int) map[string]any {
	if count <= 0 {
		return nil
	}
	return templateData(params, 0, count)
}

// resolve makes a path from the file relative to the file's directory.
// Upstream resolves them relative to the working directory of go test, which
// is the directory of its config files, so its own files mean the same here.
func (f *File) resolve(p string) string {
	if f.inFS {
		return path.Join(f.Dir, p)
	}
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(f.Dir, p)
}
