package explainacc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/perf/groundtruth"
)

// ControlPlaneEnv names a control plane of another Kubernetes version to
// record the scenarios on instead of perf/go.mod's, in a process of its own:
// a schedq-controlplane-<version> binary (upstreamgen -controlplane, make
// explain-accuracy-versions). Workloads of workloads/ run on perf/go.mod's
// version only.
const ControlPlaneEnv = "SCHEDQ_EXPLAINACC_CONTROL_PLANE"

// externalControlPlane is a schedq-controlplane process: its kubeconfig,
// and the ground truth over loopback HTTP.
type externalControlPlane struct {
	cmd        *exec.Cmd
	kubeconfig string
	queueURL   string
	http       *http.Client
	done       chan struct{}
	// err is the first failure to read the ground truth.
	mu  sync.Mutex
	err error
}

// startExternal starts bin with the gate set as pfb says and four nodes,
// and waits for it to say where it is.
func startExternal(t *testing.T, bin string, pfb bool, logs *testsupport.TailBuffer) *externalControlPlane {
	t.Helper()
	c := exec.Command(bin, "--nodes", "4", "--record-pops", fmt.Sprintf("--feature-gates=SchedulerPopFromBackoffQ=%v", pfb))
	c.Stderr = logs
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	cp := &externalControlPlane{cmd: c, http: &http.Client{Timeout: 10 * time.Second}, done: make(chan struct{})}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() {
		_ = c.Wait()
		close(cp.done)
	}()
	t.Cleanup(cp.stop)
	timeout := time.After(3 * time.Minute)
	for cp.queueURL == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("%s exited before it was ready:\n%s", bin, logs)
			}
			if k, v, _ := strings.Cut(l, " "); k == "kubeconfig" {
				cp.kubeconfig = v
			} else if k == "queue" {
				cp.queueURL = v
			}
		case <-timeout:
			t.Fatalf("%s was not ready within 3 minutes:\n%s", bin, logs)
		}
	}
	go func() {
		for range lines {
		}
	}()
	return cp
}

func (cp *externalControlPlane) stop() {
	select {
	case <-cp.done:
		return
	default:
	}
	_ = cp.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-cp.done:
	case <-time.After(time.Minute):
		_ = cp.cmd.Process.Kill()
		<-cp.done
	}
}

func (cp *externalControlPlane) client(t *testing.T) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	return kubernetes.NewForConfigOrDie(cfg)
}

func (cp *externalControlPlane) fail(err error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.err == nil {
		cp.err = err
	}
}

// Err is the first failure to read the ground truth.
func (cp *externalControlPlane) Err() error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.err
}

// Queue implements truthSource.
func (cp *externalControlPlane) Queue() groundtruth.Queue {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q, err := groundtruth.Fetch(ctx, cp.http, cp.queueURL)
	if err != nil {
		cp.fail(fmt.Errorf("reading the queue: %w", err))
	}
	return q
}

// Pops implements truthSource.
func (cp *externalControlPlane) Pops() groundtruth.Pops {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := groundtruth.FetchPops(ctx, cp.http, groundtruth.PopsURL(cp.queueURL))
	if err != nil {
		cp.fail(fmt.Errorf("reading the pops: %w", err))
	}
	return p
}

// externalBinary is ControlPlaneEnv's binary, or "" for perf/go.mod's
// control plane in this process.
func externalBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(ControlPlaneEnv)
	if bin == "" {
		return ""
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s=%s: %v (make explain-accuracy-versions builds it)", ControlPlaneEnv, bin, err)
	}
	return bin
}

var errExternal = errors.New("the ground truth of the external control plane could not be read")
