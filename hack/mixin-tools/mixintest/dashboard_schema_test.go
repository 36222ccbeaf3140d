package mixintest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// validateDashboard decodes a dashboard's JSON strictly against Grafana's
// dashboard schema (grafana-foundation-sdk: unknown fields, wrong types and
// missing required fields are errors; panel options, field configs and
// queries against their plugin's schema) and checks the schema's
// constraints.
func validateDashboard(raw []byte) error {
	plugins.RegisterDefaultPlugins()
	var d dashboard.Dashboard
	// A valid input yields an empty cog.BuildErrors, not a nil error.
	var none cog.BuildErrors
	if err := d.UnmarshalJSONStrict(raw); err != nil && !(errors.As(err, &none) && len(none) == 0) {
		return err
	}
	return d.Validate()
}

// TestDashboardSchema: every rendered dashboard is valid under Grafana's
// dashboard schema, and the check refuses a dashboard spoiled in one field.
func TestDashboardSchema(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(rendered, "dashboards", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no dashboards in %s (%v)", rendered, err)
	}
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			if err := validateDashboard(raw); err != nil {
				t.Fatalf("%s does not match Grafana's dashboard schema: %v", path, err)
			}
			for _, tc := range []struct {
				name  string
				spoil func(d map[string]any)
				want  string
			}{
				{"unknown dashboard field", func(d map[string]any) { d["panelz"] = []any{} }, "panelz"},
				{"panel grid position as text", func(d map[string]any) { panel(d, 0)["gridPos"] = "0,0" }, "gridPos"},
				{"unknown panel option", func(d map[string]any) { panel(d, 0)["options"].(map[string]any)["legendd"] = true }, "legendd"},
				{"query expression as a number", func(d map[string]any) {
					panel(d, 0)["targets"].([]any)[0].(map[string]any)["expr"] = 1
				}, "expr"},
				{"unknown query field", func(d map[string]any) {
					panel(d, 0)["targets"].([]any)[0].(map[string]any)["legendFormatt"] = "{{queue}}"
				}, "legendFormatt"},
				{"fiscal year starting in month 12", func(d map[string]any) { d["fiscalYearStartMonth"] = 12 }, "fiscalYearStartMonth"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					var d map[string]any
					if err := json.Unmarshal(raw, &d); err != nil {
						t.Fatal(err)
					}
					tc.spoil(d)
					spoiled, err := json.Marshal(d)
					if err != nil {
						t.Fatal(err)
					}
					err = validateDashboard(spoiled)
					if err == nil || !strings.Contains(err.Error(), tc.want) {
						t.Errorf("spoiled dashboard: error %v, want one naming %s", err, tc.want)
					}
				})
			}
		})
	}
}

func panel(d map[string]any, i int) map[string]any {
	return d["panels"].([]any)[i].(map[string]any)
}
