package cmd

import (
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"
)

// version is stamped by the release build with
// -ldflags "-X github.com/kubectl-schedq/kubectl-schedq/pkg/cmd.version=vX.Y.Z".
var version = ""

// Version returns the plugin's version: the stamped one, else the module
// version recorded by `go install …@vX.Y.Z`, else "devel".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// releaseVersion matches a release tag, vX.Y.Z (with a pre-release suffix);
// gitDescribeBuild matches what git describe adds past a tag
// (-N-gHASH, -dirty).
var (
	releaseVersion   = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)
	gitDescribeBuild = regexp.MustCompile(`-\d+-g[0-9a-f]+|-dirty$`)
)

// VersionInfo is what `version -o json|yaml` prints.
type VersionInfo struct {
	// Version is the release tag, or what a development build knows of
	// itself (git describe, or "devel").
	Version string `json:"version"`
	// Release says whether Version is a release (vX.Y.Z).
	Release bool `json:"release"`
	// Commit is the VCS revision the binary was built from, when recorded.
	Commit    string `json:"commit,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// GetVersionInfo describes this binary.
func GetVersionInfo() VersionInfo {
	v := VersionInfo{Version: Version(), GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	v.Release = releaseVersion.MatchString(v.Version) && !gitDescribeBuild.MatchString(v.Version)
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v.Commit = s.Value
			}
		}
	}
	return v
}

// String is the plain-text line: a release says its tag, a development
// build says it is not one.
func (v VersionInfo) String() string {
	if v.Release {
		return fmt.Sprintf("kubectl-schedq %s (%s, %s)", v.Version, v.GoVersion, v.Platform)
	}
	var build []string
	if v.Version != "devel" {
		build = append(build, v.Version)
	}
	if v.Commit != "" {
		build = append(build, "commit "+v.Commit)
	}
	build = append(build, v.GoVersion, v.Platform)
	return fmt.Sprintf("kubectl-schedq development build, not a release (%s)", strings.Join(build, ", "))
}

// VersionOptions prints the plugin's version.
type VersionOptions struct {
	genericiooptions.IOStreams
	Output string
}

// NewCmdVersion returns `kubectl schedq version`.
func NewCmdVersion(streams genericiooptions.IOStreams) *cobra.Command {
	o := &VersionOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version",
		Example: `  kubectl schedq version
  kubectl schedq version -o yaml`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{noClusterFlags: "true"},
		RunE:        validateThenRun(o),
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "Output format. One of: (json, yaml); plain text when not set")
	_ = cmd.RegisterFlagCompletionFunc("output", completeOutput([]string{"json", "yaml"}))
	return cmd
}

// Validate checks the output format.
func (o *VersionOptions) Validate() error {
	if o.Output != "" && o.Output != "json" && o.Output != "yaml" {
		return fmt.Errorf("-o %s: unknown output format; version takes json or yaml, or nothing for plain text", o.Output)
	}
	return nil
}

// Run prints the version.
func (o *VersionOptions) Run() error {
	v := GetVersionInfo()
	switch o.Output {
	case "json":
		enc := json.NewEncoder(o.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = o.Out.Write(b)
		return err
	}
	_, err := fmt.Fprintln(o.Out, v)
	return err
}
