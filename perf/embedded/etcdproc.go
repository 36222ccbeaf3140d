package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// EtcdProcess is etcd run as a child process. Upstream's scheduler_perf
// harness runs etcd that way; in one process with kube-apiserver and
// kube-scheduler, etcd's writes wait on the other components' CPU and
// garbage collection, and scheduling throughput falls far below the
// harness's (docs/results.md, Scheduler performance runs). Performance runs
// therefore use this; the default control plane keeps etcd in process
// (nothing to install).
type EtcdProcess struct {
	// URL is the client URL, for Options.EtcdServers.
	URL  string
	cmd  *exec.Cmd
	dir  string
	done chan struct{}
}

// EtcdUnsafeNoFsyncEnv, when set, starts the etcd process with
// --unsafe-no-fsync. By default its WAL is fsynced, as in upstream's harness
// and on every real cluster: every write waits for the disk. Without
// fsync, pod creation ran faster and SchedulingThroughput read above
// upstream's harness on the same machine (docs/results.md, Workload runner
// fidelity). The tests set it: they check behaviour, not speed.
const EtcdUnsafeNoFsyncEnv = "SCHEDQ_ETCD_UNSAFE_NO_FSYNC"

// StartEtcdProcess starts binary (an etcd 3.6, e.g. `make etcd`'s bin/etcd)
// on loopback ports with its data in a new temporary directory, and returns
// once it answers /health. logs receives its output (nil: discarded).
func StartEtcdProcess(ctx context.Context, binary string, logs io.Writer) (*EtcdProcess, error) {
	var lastErr error
	for try := 0; try < 3; try++ {
		p, err := startEtcdProcessOnce(ctx, binary, logs)
		if err == nil {
			return p, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("etcd %s: %w", binary, lastErr)
}

func startEtcdProcessOnce(ctx context.Context, binary string, logs io.Writer) (*EtcdProcess, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "schedq-etcd-")
	if err != nil {
		return nil, err
	}
	client := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))}
	peer := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))}
	args := []string{
		"--name=schedq",
		"--data-dir=" + filepath.Join(dir, "data"),
		"--listen-client-urls=" + client.String(),
		"--advertise-client-urls=" + client.String(),
		"--listen-peer-urls=" + peer.String(),
		"--initial-advertise-peer-urls=" + peer.String(),
		"--initial-cluster=schedq=" + peer.String(),
		"--heartbeat-interval=" + strconv.Itoa(etcdTickMs),
		"--election-timeout=" + strconv.Itoa(etcdElectionMs),
		"--log-level=warn",
	}
	if os.Getenv(EtcdUnsafeNoFsyncEnv) != "" {
		args = append(args, "--unsafe-no-fsync")
	}
	cmd := exec.Command(binary, args...)
	if logs == nil {
		logs = io.Discard
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	setParentDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p := &EtcdProcess{URL: client.String(), cmd: cmd, dir: dir, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()

	deadline := time.Now().Add(30 * time.Second)
	for {
		if healthy(ctx, p.URL) {
			return p, nil
		}
		select {
		case <-p.done:
			os.RemoveAll(dir)
			return nil, errors.New("exited before it was healthy (a port taken?)")
		case <-ctx.Done():
			p.Stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.Stop()
			return nil, errors.New("not healthy after 30s")
		}
	}
}

func healthy(ctx context.Context, base string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	return resp.StatusCode == http.StatusOK && strings.Contains(string(b), `"health":"true"`)
}

// Stop ends the process and removes its data.
func (p *EtcdProcess) Stop() error {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	return os.RemoveAll(p.dir)
}

// FindEtcdBinary looks for an etcd binary beside the running executable
// (make builds bin/etcd next to bin/schedq-perf), then on PATH.
func FindEtcdBinary() (string, bool) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "etcd")
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, true
		}
	}
	if p, err := exec.LookPath("etcd"); err == nil {
		return p, true
	}
	return "", false
}
