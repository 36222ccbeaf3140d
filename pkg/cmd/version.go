package cmd

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
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
  kubectl schedq version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "Output format: '' or json")
	return cmd
}

// Validate checks the output format.
func (o *VersionOptions) Validate() error {
	if o.Output != "" && o.Output != "json" {
		return fmt.Errorf("--output %q is not supported (want json, or nothing for plain text)", o.Output)
	}
	return nil
}

// Run prints the version.
func (o *VersionOptions) Run() error {
	if o.Output == "json" {
		enc := json.NewEncoder(o.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]string{"version": Version(), "goVersion": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH})
	}
	_, err := fmt.Fprintf(o.Out, "kubectl-schedq %s (%s, %s/%s)\n", Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}
