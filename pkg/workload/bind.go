package workload

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// binder is what an op's bind works with: upstream's Workload.Params (get,
// getParam and resolveTemplateParams: a reference is looked up as itself
// minus its first character, which should be "$", the param is recorded as
// used, and its JSON type is required without conversion), the test case
// the op is in, and the loader that reads the files ops name.
type binder struct {
	f      *File
	tc     *TestCase
	load   *fileLoader
	params map[string]any
	used   map[string]bool
}

func (b *binder) lookup(field, ref string) (any, string, error) {
	key := ref[1:]
	b.used[key] = true
	v, ok := b.params[key]
	if !ok {
		if !strings.HasPrefix(ref, "$") {
			return nil, key, fmt.Errorf("%s %q is not defined in params (a reference is \"$\" and a param's name; this one looked up %q)", field, ref, key)
		}
		return nil, key, fmt.Errorf("%s %q is not defined in params", field, ref)
	}
	return v, key, nil
}

func (b *binder) int(field, ref string) (int, error) {
	v, key, err := b.lookup(field, ref)
	if err != nil {
		return 0, err
	}
	f, ok := v.(float64)
	if !ok {
		return 0, wrongType(field, ref, key, v, "a number")
	}
	// JSON numbers are float64; upstream truncates them.
	return countInRange(field, ref, key, f)
}

func (b *binder) duration(field, ref string) (time.Duration, error) {
	v, key, err := b.lookup(field, ref)
	if err != nil {
		return 0, err
	}
	s, ok := v.(string)
	if !ok {
		return 0, wrongType(field, ref, key, v, `a duration string such as "30s"`)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s %q: param %q: %w", field, ref, key, err)
	}
	return durationInRange(field, ref, key, d)
}

func (b *binder) bool(field, ref string) (bool, error) {
	v, key, err := b.lookup(field, ref)
	if err != nil {
		return false, err
	}
	x, ok := v.(bool)
	if !ok {
		return false, wrongType(field, ref, key, v, "a boolean")
	}
	return x, nil
}

// templateParams is upstream's resolveTemplateParams: a string value
// "$name" becomes param name's value, "$name|default" falls back to default
// (read as YAML, so a plain word is a string and 3 a number) when the
// workload has no such param; other values stay as written.
func (b *binder) templateParams(params map[string]any) (map[string]any, error) {
	if len(params) == 0 {
		return nil, nil
	}
	out := maps.Clone(params)
	for _, k := range sortedKeys(params) {
		s, ok := params[k].(string)
		if !ok || !strings.HasPrefix(s, "$") {
			continue
		}
		key, def, hasDefault := s[1:], "", false
		if sep := strings.Index(key, "|"); sep > 0 {
			key, def, hasDefault = key[:sep], key[sep+1:], true
		}
		if v, found := b.params[key]; found {
			b.used[key] = true
			out[k] = v
			continue
		}
		if !hasDefault {
			return nil, fmt.Errorf("templateParams[%q] %q: param %q is not defined in params (give a default with %q)", k, s, key, "$"+key+"|value")
		}
		var v any
		if err := yaml.Unmarshal([]byte(def), &v); err != nil {
			return nil, fmt.Errorf("templateParams[%q] %q: the default %q is not YAML: %w", k, s, def, cleanDecodeError(err))
		}
		out[k] = v
	}
	return out, nil
}

func wrongType(field, ref, key string, v any, want string) error {
	var got string
	switch x := v.(type) {
	case nil:
		got = "null"
	case float64:
		got = fmt.Sprintf("the number %g", x)
	case string:
		got = fmt.Sprintf("the string %q", x)
	case bool:
		got = fmt.Sprintf("the boolean %t", x)
	case map[string]any:
		got = "an object"
	case []any:
		got = "a list"
	default:
		got = fmt.Sprintf("%T", v)
	}
	return fmt.Errorf("%s %q: param %q is %s, want %s", field, ref, key, got, want)
}

// path resolves an optional path field that is set; an empty one is an
// error.
func (b *binder) path(key string, p *string) (string, error) {
	if *p == "" {
		return "", fmt.Errorf("%s is empty", key)
	}
	return b.f.resolve(*p), nil
}

// defaultNamespace is upstream's rule for ops with an optional namespace.
func defaultNamespace(ns *string, pos OpPos) (string, error) {
	if ns == nil {
		return fmt.Sprintf("namespace-%d", pos.Index), nil
	}
	if *ns == "" {
		return "", errors.New(`namespace is empty (leave it out for the default "namespace-<op index>")`)
	}
	return *ns, nil
}

// isValidCount is upstream's: a count must not be negative (nor, here,
// above MaxCount), and with parameterization allowed a countParam stands in
// for it.
func isValidCount(allowParameterization bool, count int, countParam string) bool {
	if !allowParameterization || countParam == "" {
		return count >= 0 && count <= MaxCount
	}
	return strings.HasPrefix(countParam, "$")
}

func countError(count int, countParam string) error {
	return fieldCountError("count", count, "countParam", countParam)
}

func fieldCountError(field string, count int, paramField, param string) error {
	if param != "" && !strings.HasPrefix(param, "$") {
		return errorf("%s %q must start with \"$\" (it names a param: \"$name\")", paramField, param)
	}
	return errorf("%s %d is out of range: want a count from 0 to %d", field, count, MaxCount)
}

// one is bind's result for an op that binds to one Op.
func one(op Op, err error) ([]Op, error) {
	if err != nil {
		return nil, err
	}
	return []Op{op}, nil
}
