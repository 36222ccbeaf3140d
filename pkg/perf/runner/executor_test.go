package runner

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// TestExecutor_runOps_interruptedSleep interrupts a workload during its
// sleep: the error blames the sleep, not the op after it, and names it by
// the same number the progress line gives it.
func TestExecutor_runOps_interruptedSleep(t *testing.T) {
	config := "- name: T\n  workloadTemplate:\n  - {opcode: sleep, duration: 1h}\n  - {opcode: createPods, count: 1, collectMetrics: true}\n  workloads:\n  - name: w\n"
	f, err := workload.Parse(filepath.Join(t.TempDir(), "config.yaml"), []byte(config))
	if err != nil {
		t.Fatal(err)
	}
	sel, err := f.Select("", "", "")
	if err != nil {
		t.Fatal(err)
	}
	e := newTestExecutor(fake.NewClientset())
	e.sel = sel[0]
	var progress bytes.Buffer
	e.opts.Progress = NewProgress(&progress, false)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	err = e.runOps(ctx)
	var opErr *OpError
	if !errors.As(err, &opErr) || opErr.Op.Opcode() != workload.OpcodeSleep || opErr.Op.Pos().Index != 0 {
		t.Fatalf("runOps() = %v, want the sleep (op 0) blamed", err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("runOps() = %v, want the interrupt as its cause", err)
	}
	if !strings.Contains(err.Error(), "op 0 (sleep)") {
		t.Errorf("error %q does not name op 0 (sleep)", err)
	}
	if want := "T/w: op 0 (1st of 2) sleep failed after"; !strings.Contains(progress.String(), want) {
		t.Errorf("progress lacks %q:\n%s", want, progress.String())
	}
	if strings.Contains(progress.String(), "createPods") {
		t.Errorf("the op after the sleep started:\n%s", progress.String())
	}
}
