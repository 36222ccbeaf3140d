package schedconfig

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// recordedDir holds what real kube-schedulers answered (see its README).
const recordedDir = "../../testdata/schedulers"

var recordedVersions = []string{"v1.34.4", "v1.35.4", "v1.36.3", "v1.37.2"}

func readRecorded(t testing.TB, version, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(recordedDir, version, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func readRecordedIfAny(t testing.TB, name string) ([]byte, bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(recordedDir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return data, true
}

// defaultMultiPoint is upstream's getDefaultPlugins
// (pkg/scheduler/apis/config/v1/default_plugins.go) with the plugins its
// feature gates add on by default (DynamicResources, after
// InterPodAffinity); v1.37 lists NodeName before NodeUnschedulable.
var defaultMultiPoint = []string{
	"SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
	"NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
	"PodTopologySpread", "InterPodAffinity", "DynamicResources", "DefaultPreemption",
	"NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder",
}

func TestParseConfigz_recorded(t *testing.T) {
	// NodeDeclaredFeatures is on by default from v1.36 and appended last.
	v136 := append(append([]string{}, defaultMultiPoint...), "NodeDeclaredFeatures")
	v137 := append([]string{}, v136...)
	v137[2], v137[3] = v137[3], v137[2]
	tests := []struct {
		version    string
		shape      Shape
		multiPoint []string
	}{
		{"v1.34.4", ShapeInternal, defaultMultiPoint},
		{"v1.35.4", ShapeInternal, defaultMultiPoint},
		{"v1.36.3", ShapeV1, v136},
		{"v1.37.2", ShapeV1, v137},
	}
	for _, tc := range tests {
		t.Run(tc.version, func(t *testing.T) {
			got, err := ParseConfigz(readRecorded(t, tc.version, "configz.json"))
			if err != nil {
				t.Fatal(err)
			}
			want := Config{
				Shape:                    tc.shape,
				PodInitialBackoffSeconds: DefaultPodInitialBackoffSeconds,
				PodMaxBackoffSeconds:     DefaultPodMaxBackoffSeconds,
				Profiles: []Profile{{
					SchedulerName: DefaultSchedulerName,
					Plugins:       []PluginSet{{ExtensionPoint: "multiPoint", Enabled: tc.multiPoint}},
				}},
				// Recorded on the embedded control plane, whose one
				// scheduler runs with --leader-elect=false.
				LeaderElection: LeaderElection{ResourceNamespace: "kube-system", ResourceName: "kube-scheduler"},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ParseConfigz (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestParseFlagz_recorded(t *testing.T) {
	tests := []struct {
		file        string
		contentType string
		format      FlagzFormat
		gates       map[string]bool
	}{
		{"v1.34.4/flagz.txt", "text/plain; charset=utf-8", FlagzText, map[string]bool{"ComponentFlagz": true}},
		{"v1.35.4/flagz.txt", "text/plain; charset=utf-8", FlagzText, map[string]bool{"ComponentFlagz": true}},
		{"v1.35.4/flagz.json", "application/json;g=config.k8s.io;v=v1alpha1;as=Flagz", FlagzV1alpha1, map[string]bool{"ComponentFlagz": true}},
		{"v1.36.3/flagz.txt", "text/plain; charset=utf-8", FlagzText, map[string]bool{}},
		{"v1.36.3/flagz.json", "application/json;g=config.k8s.io;v=v1beta1;as=Flagz", FlagzV1beta1, map[string]bool{}},
		{"v1.37.2/flagz.txt", "text/plain; charset=utf-8", FlagzText, map[string]bool{"DRADeviceTaintRules": false}},
		{"v1.37.2/flagz.json", "application/json;g=config.k8s.io;v=v1beta1;as=Flagz", FlagzV1beta1, map[string]bool{"DRADeviceTaintRules": false}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			data, ok := readRecordedIfAny(t, tc.file)
			if !ok {
				t.Fatalf("no recording %s", tc.file)
			}
			for _, ct := range []string{tc.contentType, ""} {
				f, err := ParseFlagz(data, ct)
				if err != nil {
					t.Fatalf("content type %q: %v", ct, err)
				}
				if f.Format != tc.format || f.Component != "kube-scheduler" {
					t.Errorf("content type %q: format %q, component %q; want %q, kube-scheduler", ct, f.Format, f.Component, tc.format)
				}
				d, ok, err := f.PodMaxInUnschedulablePodsDuration()
				if err != nil || !ok || d != 5*time.Minute {
					t.Errorf("pod-max-in-unschedulable-pods-duration = %v, %v, %v; want 5m0s", d, ok, err)
				}
				gates, err := f.FeatureGates()
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.gates, gates); diff != "" {
					t.Errorf("FeatureGates (-want, +got):\n%s", diff)
				}
				// Flags every kube-scheduler of these versions has, with the
				// values the recording's command line gave.
				for name, want := range map[string]string{"leader-elect": "false", "bind-address": "127.0.0.1", "secure-port": "10959"} {
					if got := f.Values[name]; got != want {
						t.Errorf("flag %s = %q, want %q", name, got, want)
					}
				}
			}
		})
	}
}

// The text and structured answers of one process carry the same flags.
func TestParseFlagz_recordedTextMatchesJSON(t *testing.T) {
	for _, v := range []string{"v1.35.4", "v1.36.3", "v1.37.2"} {
		t.Run(v, func(t *testing.T) {
			text, err := ParseFlagz(readRecorded(t, v, "flagz.txt"), "text/plain")
			if err != nil {
				t.Fatal(err)
			}
			structured, err := ParseFlagz(readRecorded(t, v, "flagz.json"), "application/json")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(structured.Values, text.Values); diff != "" {
				t.Errorf("text flags differ from the JSON ones (-json, +text):\n%s", diff)
			}
		})
	}
}

// Each directory holds what the version it is named after answered: its
// kubernetes_build_info says so, and its /configz has that version's shape.
func TestRecordings_version(t *testing.T) {
	buildInfo := regexp.MustCompile(`(?m)^kubernetes_build_info\{[^}]*git_version="([^"]+)"`)
	for _, v := range recordedVersions {
		t.Run(v, func(t *testing.T) {
			m := buildInfo.FindSubmatch(readRecorded(t, v, "metrics.prom"))
			if m == nil {
				t.Fatal("metrics.prom has no kubernetes_build_info with a git_version")
			}
			if got := string(m[1]); got != v {
				t.Errorf("kubernetes_build_info git_version = %s, want %s", got, v)
			}
			c, err := ParseConfigz(readRecorded(t, v, "configz.json"))
			if err != nil {
				t.Fatal(err)
			}
			want := ShapeV1
			if v < "v1.36" {
				want = ShapeInternal
			}
			if c.Shape != want {
				t.Errorf("configz shape %s, want %s", c.Shape, want)
			}
		})
	}
}

// A recorded answer spoiled in one field is refused with that field named,
// in the spelling of the version's shape.
func TestParseConfigz_recordedSpoiled(t *testing.T) {
	tests := []struct {
		name      string
		old, new  map[Shape]string
		wantError map[Shape]string
	}{
		{
			name:      "initial backoff a string",
			old:       map[Shape]string{ShapeInternal: `"PodInitialBackoffSeconds":1`, ShapeV1: `"podInitialBackoffSeconds":1`},
			new:       map[Shape]string{ShapeInternal: `"PodInitialBackoffSeconds":"1s"`, ShapeV1: `"podInitialBackoffSeconds":"1s"`},
			wantError: map[Shape]string{ShapeInternal: "configz: componentconfig.PodInitialBackoffSeconds: want an integer, got a string", ShapeV1: "configz: componentconfig.podInitialBackoffSeconds: want an integer, got a string"},
		},
		{
			name:      "max backoff below initial",
			old:       map[Shape]string{ShapeInternal: `"PodMaxBackoffSeconds":10`, ShapeV1: `"podMaxBackoffSeconds":10`},
			new:       map[Shape]string{ShapeInternal: `"PodMaxBackoffSeconds":0`, ShapeV1: `"podMaxBackoffSeconds":0`},
			wantError: map[Shape]string{ShapeInternal: "configz: componentconfig.PodMaxBackoffSeconds: 0 is less than PodInitialBackoffSeconds 1", ShapeV1: "configz: componentconfig.podMaxBackoffSeconds: 0 is less than podInitialBackoffSeconds 1"},
		},
		{
			name:      "a plugin's name a number",
			old:       map[Shape]string{ShapeInternal: `{"Name":"PrioritySort"`, ShapeV1: `{"name":"PrioritySort"`},
			new:       map[Shape]string{ShapeInternal: `{"Name":2`, ShapeV1: `{"name":2`},
			wantError: map[Shape]string{ShapeInternal: "configz: componentconfig.Profiles[0].Plugins.MultiPoint.Enabled[1].Name: want a string, got a number", ShapeV1: "configz: componentconfig.profiles[0].plugins.multiPoint.enabled[1].name: want a string, got a number"},
		},
		{
			name:      "the scheduler name empty",
			old:       map[Shape]string{ShapeInternal: `"SchedulerName":"default-scheduler"`, ShapeV1: `"schedulerName":"default-scheduler"`},
			new:       map[Shape]string{ShapeInternal: `"SchedulerName":""`, ShapeV1: `"schedulerName":""`},
			wantError: map[Shape]string{ShapeInternal: "configz: componentconfig.Profiles[0].SchedulerName: empty; every profile names the scheduler its pods ask for", ShapeV1: "configz: componentconfig.profiles[0].schedulerName: empty; every profile names the scheduler its pods ask for"},
		},
	}
	for _, v := range recordedVersions {
		data := string(readRecorded(t, v, "configz.json"))
		shape := ShapeV1
		if v < "v1.36" {
			shape = ShapeInternal
		}
		for _, tc := range tests {
			t.Run(v+"/"+tc.name, func(t *testing.T) {
				if strings.Count(data, tc.old[shape]) != 1 {
					t.Fatalf("the recording has %q %d times, want once", tc.old[shape], strings.Count(data, tc.old[shape]))
				}
				_, err := ParseConfigz([]byte(strings.Replace(data, tc.old[shape], tc.new[shape], 1)))
				if err == nil || err.Error() != tc.wantError[shape] {
					t.Errorf("error %v, want %q", err, tc.wantError[shape])
				}
			})
		}
	}
}
