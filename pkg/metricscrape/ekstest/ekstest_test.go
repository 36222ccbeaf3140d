package ekstest

import "testing"

func TestAccepts(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                         true,
		"application/json, */*":    true, // kubectl get --raw
		"*/*":                      true, // Datadog
		"application/json":         true,
		"text/plain;version=0.0.4": false, // kube-scheduler's own
		"application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5": false,
		"text/plain, */*;q=0":                 false,
		"application/yaml;q=0.9":              true,
		"application/vnd.kubernetes.protobuf": true,
	} {
		if got := Accepts(accept); got != want {
			t.Errorf("Accepts(%q) = %v, want %v", accept, got, want)
		}
	}
}
