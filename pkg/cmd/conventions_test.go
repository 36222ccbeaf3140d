package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/report"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/run"
	"github.com/kubectl-schedq/kubectl-schedq/workloads"
)

// TestMain refuses to run as a perf run's workload process: a test that
// reached a real perf run would start the test binary as its child, and
// that one every test again.
func TestMain(m *testing.M) {
	// The signal tests run the test binary as the plugin, and its perf
	// runs run it as their workload processes.
	if os.Getenv(actAsPluginEnv) == "1" {
		root := NewCmdSchedq(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
		root.SetArgs(os.Args[1:])
		if err := root.Execute(); err != nil {
			fmt.Fprintf(os.Stderr, "error: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	for _, a := range os.Args[1:] {
		if a == run.ChildCommand {
			fmt.Fprintln(os.Stderr, "a test started a perf run's workload process")
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

// TestUnknownSubcommand: a word that is no subcommand is an error, with
// the help pointed at, not the help with exit 0.
func TestUnknownSubcommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"perf", "foo"}, `unknown command "foo" for "kubectl schedq perf"`},
		{[]string{"perf", "lis"}, "Did you mean this?\n\tlist"},
		{[]string{"completion", "tcsh"}, `unknown command "tcsh" for "kubectl schedq completion"`},
		{[]string{"nope"}, `unknown command "nope"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			root := NewCmdSchedq(genericiooptions.NewTestIOStreamsDiscard())
			root.SetArgs(tc.args)
			err := root.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	// With no word at all, perf prints its help and succeeds.
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	root := NewCmdSchedq(streams)
	root.SetOut(out)
	root.SetArgs([]string{"perf"})
	if err := root.Execute(); err != nil || !strings.Contains(out.String(), "Available Commands:") {
		t.Errorf("perf alone: %v\n%s", err, out)
	}
}

// TestHelp_globalFlagsThatApply: the help of commands that read no
// cluster says only -v applies; the others name the kubeconfig flags.
func TestHelp_globalFlagsThatApply(t *testing.T) {
	const onlyV = "Of the global flags only -v applies"
	for _, tc := range []struct {
		args  []string
		onlyV bool
	}{
		{[]string{"perf", "list", "--help"}, true},
		{[]string{"perf", "report", "--help"}, true},
		{[]string{"completion", "--help"}, true},
		{[]string{"completion", "bash", "--help"}, true},
		{[]string{"perf", "run", "--help"}, false},
		{[]string{"perf", "cleanup", "--help"}, false},
		{[]string{"status", "--help"}, false},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			root := NewCmdSchedq(streams)
			root.SetOut(out)
			root.SetArgs(tc.args)
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(out.String(), onlyV); got != tc.onlyV {
				t.Errorf("help says %q: %t, want %t:\n%s", onlyV, got, tc.onlyV, out)
			}
		})
	}
}

func TestPerfList_yaml(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	root := NewCmdSchedq(streams)
	root.SetArgs([]string{"perf", "list", "-o", "yaml"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Items []workloads.Info `json:"items"`
	}
	if err := yaml.UnmarshalStrict(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want, _ := workloads.List()
	if len(got.Items) != len(want) || got.Items[0].Name != want[0].Name || len(got.Items[0].TestCases) == 0 {
		t.Errorf("items %+v", got.Items)
	}
}

// TestPerfRun_noKubeconfig: with no kubeconfig at all, perf run --cluster
// kubeconfig says so as status and explain do, before anything starts.
func TestPerfRun_noKubeconfig(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("KUBECONFIG", filepath.Join(dir, "none"))
	t.Setenv("HOME", dir)
	var msgs []string
	for _, args := range [][]string{
		{"perf", "run", "backoff-drain", "--cluster", "kubeconfig", "--allow-existing-cluster", "--out", filepath.Join(dir, "out")},
		{"status"},
		{"explain", "-A", "--no-metrics"},
	} {
		root := NewCmdSchedq(genericiooptions.NewTestIOStreamsDiscard())
		root.SetArgs(args)
		err := root.Execute()
		if err == nil {
			t.Fatalf("%v: no error", args)
		}
		msgs = append(msgs, err.Error())
	}
	const want = "no kubeconfig: set KUBECONFIG or --kubeconfig, or give --server"
	for i, m := range msgs {
		if !strings.HasPrefix(m, want) {
			t.Errorf("message %d %q does not start with %q", i, m, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Error("perf run created --out")
	}
}

// TestPerfReport_failedRun: the report of a run whose workload failed
// prints the table, gives the reason and fails.
func TestPerfReport_failedRun(t *testing.T) {
	dir := t.TempDir()
	results := `[{"path":"backoff-drain","testCase":"BackoffDrain","workload":"4Nodes_40Blocked","error":"kubeconfig: the scheduler did not answer"}]`
	if err := os.WriteFile(filepath.Join(dir, "results.json"), []byte(results), 0o644); err != nil {
		t.Fatal(err)
	}
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	root := NewCmdSchedq(streams)
	root.SetArgs([]string{"perf", "report", dir})
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), "1 of 1 workload runs failed:\n  BackoffDrain/4Nodes_40Blocked: kubeconfig: the scheduler did not answer") {
		t.Errorf("err = %v, want the reason", err)
	}
	if !strings.Contains(out.String(), "BackoffDrain/4Nodes_40Blocked") {
		t.Errorf("no table:\n%s", out)
	}
}

// TestPerfReport_interrupted: Ctrl-C (the command's context ending) ends
// perf report within 2 s, whatever it is reading, and it then writes
// nothing.
func TestPerfReport_interrupted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after time.Duration
	}{
		{"before it starts", 0},
		{"while it reads", 20 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			// Sparse: the most results.json may hold, taking no disk.
			if err := os.WriteFile(filepath.Join(dir, "results.json"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(filepath.Join(dir, "results.json"), report.MaxReadBytes); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			if tc.after == 0 {
				cancel()
			} else {
				time.AfterFunc(tc.after, cancel)
			}
			root := NewCmdSchedq(genericiooptions.NewTestIOStreamsDiscard())
			root.SetArgs([]string{"perf", "report", dir})
			began := time.Now()
			err := root.ExecuteContext(ctx)
			if took := time.Since(began); took > 2*time.Second+tc.after {
				t.Errorf("perf report took %v, interrupted after %v", took, tc.after)
			}
			if !errors.Is(err, run.ErrInterrupted) {
				t.Errorf("perf report = %v, want it interrupted", err)
			}
			time.Sleep(100 * time.Millisecond) // what a late write would take
			for _, f := range []string{"report.html", "summary.txt"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					t.Errorf("an interrupted perf report wrote %s", f)
				}
			}
		})
	}
}

// TestCompletion_shortBound: completion against a server that never
// answers gives up within completion's bound, not the 30s of a command.
func TestCompletion_shortBound(t *testing.T) {
	if completionTimeout > 5*time.Second {
		t.Errorf("completion's bound is %s, want at most 5s", completionTimeout)
	}
	defer func(d time.Duration) { completionTimeout = d }(completionTimeout)
	completionTimeout = 300 * time.Millisecond
	kubeconfig := kubeconfigFor(t, testsupport.StalledTLSServer(t).URL)
	for _, args := range [][]string{
		{"__complete", "explain", ""},
		{"__complete", "status", "-n", ""},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			streams := genericiooptions.NewTestIOStreamsDiscard()
			root := NewCmdSchedq(streams)
			root.SetOut(io.Discard)
			root.SetErr(io.Discard)
			root.SetArgs(append(args[:1:1], append([]string{"--kubeconfig", kubeconfig}, args[1:]...)...))
			start := time.Now()
			_ = root.Execute()
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("completion took %s, bound 300ms", took)
			}
		})
	}
}
