package workload

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// How this package reads YAML, as upstream does: strictly, and maps in the
// order of their keys.

// unmarshalStrict is sigs.k8s.io/yaml.UnmarshalStrict with the error cleaned.
func unmarshalStrict(b []byte, v any) error {
	if err := yaml.UnmarshalStrict(b, v); err != nil {
		return cleanDecodeError(err)
	}
	return nil
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
		return nil, fromContent(err)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("not a single object (got %T)", obj)
	}
	return u, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
