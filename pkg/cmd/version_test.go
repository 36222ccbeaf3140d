package cmd

import (
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"
)

func TestVersionInfo(t *testing.T) {
	defer func(v string) { version = v }(version)
	for _, tc := range []struct {
		stamped string
		release bool
		want    string
	}{
		{"v0.1.0", true, "kubectl-schedq v0.1.0 ("},
		{"v0.2.0-rc.1", true, "kubectl-schedq v0.2.0-rc.1 ("},
		{"v0.1.0-3-gabc1234", false, "kubectl-schedq development build, not a release (v0.1.0-3-gabc1234, "},
		{"v0.1.0-dirty", false, "kubectl-schedq development build, not a release (v0.1.0-dirty, "},
		{"abc1234", false, "kubectl-schedq development build, not a release (abc1234, "},
		{"", false, "kubectl-schedq development build, not a release ("},
	} {
		version = tc.stamped
		v := GetVersionInfo()
		if v.Release != tc.release || !strings.HasPrefix(v.String(), tc.want) {
			t.Errorf("%q: release %v, %q; want %v, %q", tc.stamped, v.Release, v, tc.release, tc.want)
		}
	}
}

func TestVersion_yaml(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	root := NewCmdSchedq(streams)
	root.SetArgs([]string{"version", "-o", "yaml"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var v VersionInfo
	if err := yaml.UnmarshalStrict(out.Bytes(), &v); err != nil || v.GoVersion == "" {
		t.Fatalf("%v\n%s", err, out)
	}
}
