package cmd

import (
	"os"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
)

// examples are v1.36.3's outputs, examplesV137 v1.37.2's.
const (
	examples     = "../queue/trace/testdata/upstream/"
	examplesV137 = "../queue/trace/testdata/upstream-v1.37/"
)

func TestSimulateOptions_Validate(t *testing.T) {
	tests := []struct {
		name    string
		o       SimulateOptions
		wantErr string
	}{
		{"no trace", SimulateOptions{}, "--trace is required"},
		{"bad override", SimulateOptions{TracePath: "x", PopFromBackoffQ: "yes"}, "want true or false"},
		{"ok", SimulateOptions{TracePath: "-", PopFromBackoffQ: "false", SchedulerVersion: "v1.37"}, ""},
		{"patch version", SimulateOptions{TracePath: "-", SchedulerVersion: "1.34.4"}, ""},
		{"no version", SimulateOptions{TracePath: "-"}, "--scheduler-version"},
		{"unknown version", SimulateOptions{TracePath: "-", SchedulerVersion: "v1.33"}, "no queue model (modelled: v1.34–v1.37)"},
		{"not a version", SimulateOptions{TracePath: "-", SchedulerVersion: "latest"}, `"latest" is not a Kubernetes version`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.Validate()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestSimulate_Command: --scheduler-version picks the queue, v1.37 by
// default; patch versions are accepted.
func TestSimulate_Command(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, examplesV137},
		{[]string{"--scheduler-version", "v1.37"}, examplesV137},
		{[]string{"--scheduler-version", "v1.36.3"}, examples},
		{[]string{"--scheduler-version", "v1.34"}, examples},
	} {
		t.Run(strings.Join(tc.args, "="), func(t *testing.T) {
			want, err := os.ReadFile(tc.want + "gated_pod_ungated.out.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			root := NewCmdSchedq(streams)
			root.SetArgs(append([]string{"simulate", "--trace", examples + "gated_pod_ungated.trace.jsonl"}, tc.args...))
			if err := root.Execute(); err != nil {
				t.Fatalf("simulate: %v (stderr %q)", err, errOut)
			}
			if d := trace.Compare(want, out.Bytes()); d != "" {
				t.Error(d)
			}
		})
	}
}

func TestSimulate_Stdin(t *testing.T) {
	in, err := os.ReadFile(examples + "pop_from_backoffq_pfb_on.trace.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(examples + "pop_from_backoffq_pfb_off.out.jsonl")
	streams, stdin, out, _ := genericiooptions.NewTestIOStreams()
	stdin.Write(in)
	// The pfb_on trace with the gate forced off behaves as the pfb_off one.
	o := &SimulateOptions{IOStreams: streams, TracePath: "-", PopFromBackoffQ: "false", SchedulerVersion: "v1.36"}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(); err != nil {
		t.Fatal(err)
	}
	if d := trace.Compare(want, out.Bytes()); d != "" {
		t.Error(d)
	}
}

// TestSimulate_InvalidPrintsNothing: a trace that is found invalid half-way
// (after pops were printed) leaves stdout empty and names file and line.
func TestSimulate_InvalidPrintsNothing(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	path := examples + "invalid/done_twice.trace.jsonl"
	o := &SimulateOptions{IOStreams: streams, TracePath: path}
	err := o.Run()
	if err == nil {
		t.Fatal("invalid trace accepted")
	}
	if want := path + ":4: done of pod"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want it to start with %q", err, want)
	}
	if out.Len() != 0 {
		t.Errorf("stdout not empty: %q", out)
	}
}

// TestSimulate_PodGroupsBeforeV137: a pod-group trace on v1.34–v1.36 is
// refused on its header's line, printing nothing.
func TestSimulate_PodGroupsBeforeV137(t *testing.T) {
	path := examplesV137 + "podgroups/gang_incomplete_then_podgroup.trace.jsonl"
	for _, v := range []string{"v1.34", "v1.35", "v1.36.3"} {
		t.Run(v, func(t *testing.T) {
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			root := NewCmdSchedq(streams)
			root.SetArgs([]string{"simulate", "--trace", path, "--scheduler-version", v})
			err := root.Execute()
			if err == nil {
				t.Fatal("a pod-group trace replayed before v1.37")
			}
			if want := path + ":1: genericWorkload needs --scheduler-version v1.37"; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q, want it to start with %q", err, want)
			}
			if out.Len() != 0 {
				t.Errorf("stdout not empty: %q", out)
			}
		})
	}
}

func TestSimulate_MissingFile(t *testing.T) {
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	o := &SimulateOptions{IOStreams: streams, TracePath: "does-not-exist.jsonl"}
	if err := o.Run(); err == nil || !strings.Contains(err.Error(), "does-not-exist.jsonl") {
		t.Errorf("Run() = %v, want an error naming the file", err)
	}
}

// TestSimulate_Empty: an empty trace is refused, a trace with a header and
// no operations is replayed with a warning; neither passes without a word.
func TestSimulate_Empty(t *testing.T) {
	for _, tc := range []struct {
		name, in, wantErr, wantWarning string
	}{
		{name: "nothing", in: "", wantErr: "stdin: the trace is empty: no header and no operations"},
		{name: "blank lines", in: "\n  \n", wantErr: "stdin: the trace is empty"},
		{name: "header only", in: `{"schedqTrace":1}` + "\n", wantWarning: "warning: stdin: the trace has a header and no operations"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			streams, stdin, out, errOut := genericiooptions.NewTestIOStreams()
			stdin.WriteString(tc.in)
			err := (&SimulateOptions{IOStreams: streams, TracePath: "-"}).Run()
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || out.Len() != 0 {
					t.Fatalf("err = %v, stdout %q; want %q and nothing printed", err, out, tc.wantErr)
				}
				return
			}
			if err != nil || !strings.Contains(errOut.String(), tc.wantWarning) {
				t.Fatalf("err = %v, stderr %q; want the warning %q", err, errOut, tc.wantWarning)
			}
		})
	}
}
