package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

// EtcdProcess is etcd run as a child process, as upstream's scheduler_perf
// harness runs it (test/integration/framework, RunCustomEtcd): in one process
// with kube-apiserver and kube-scheduler, etcd's writes wait on the other
// components' CPU and garbage collection. Workload runs use it, always; the
// default control plane keeps etcd in process (docs/results.md, Workload
// runner fidelity).
type EtcdProcess struct {
	// URL is the client URL, for Options.EtcdServers: a unix socket, as
	// upstream's harness serves etcd.
	URL string
	// Binary and Args are the command line it runs; Binary is this
	// executable when no etcd binary lies beside it (see EtcdCommand).
	Binary string
	Args   []string
	cmd    *exec.Cmd
	dir    string
	done   chan struct{}
}

// EtcdUnsafeNoFsyncEnv, when set, starts the etcd process with
// --unsafe-no-fsync and a 10 ms raft tick (it elects itself in tens of
// milliseconds instead of up to a second). By default its WAL is fsynced and
// its flags are those of upstream's harness, as on every real cluster: every
// write waits for the disk. Without fsync SchedulingThroughput reads above
// upstream's harness on the same machine (docs/results.md, Workload runner
// fidelity). The tests set it: they check behaviour, not speed.
const EtcdUnsafeNoFsyncEnv = "SCHEDQ_ETCD_UNSAFE_NO_FSYNC"

// etcdMainEnv makes a process of a binary that links this package run etcd
// (etcdmain.Main with its arguments) instead of its main: EtcdCommand's
// fallback when no etcd binary lies beside the executable.
const etcdMainEnv = "SCHEDQ_EMBEDDED_ETCD_MAIN"

func init() {
	if os.Getenv(etcdMainEnv) == "1" {
		os.Unsetenv(etcdMainEnv)
		etcdmain.Main(os.Args) // exits on its own, on a signal or an error
		os.Exit(1)
	}
}

// EtcdCommand returns the etcd to run: an etcd binary beside the running
// executable (make builds bin/etcd next to bin/schedq-perf, and upstream's
// harness runs the same binary from PATH in make perf-compare-upstream), or
// else this executable itself, which runs etcdmain.Main under env: the etcd
// perf/go.mod resolves, in both cases. There is no fallback to an etcd inside
// the control plane's process.
func EtcdCommand() (binary string, env []string, err error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("etcd: the running executable: %w", err)
	}
	if p := filepath.Join(filepath.Dir(exe), "etcd"); isExecutable(p) {
		return p, nil, nil
	}
	return exe, []string{etcdMainEnv + "=1"}, nil
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// etcdArgs are etcd's flags for data directory dir, serving clients on the
// unix socket socket: those of upstream's harness (RunCustomEtcd, k8s.io/kubernetes
// v1.37.2 test/integration/framework/etcd.go), word for word, so that both
// sides of make perf-compare-upstream run the same etcd the same way. With
// noFsync (EtcdUnsafeNoFsyncEnv) the WAL is not fsynced and the raft tick is
// 10 ms, for tests.
func etcdArgs(dir, socket string, noFsync bool) []string {
	args := []string{
		"--data-dir", dir,
		"--listen-client-urls", "unix://" + socket,
		"--advertise-client-urls", "http://127.0.0.111:0",
		"--listen-peer-urls", "http://127.0.0.1:0",
		"-log-level", "warn",
		"--quota-backend-bytes", strconv.FormatInt(8*1024*1024*1024, 10),
	}
	if noFsync {
		args = append(args, "--unsafe-no-fsync",
			"--heartbeat-interval", strconv.Itoa(etcdTickMs), "--election-timeout", strconv.Itoa(etcdElectionMs))
	}
	return args
}

// StartEtcdProcess starts an etcd process (EtcdCommand) with its data and
// socket in a new temporary directory, and returns once it answers /health.
// logs receives its output (nil: discarded).
func StartEtcdProcess(ctx context.Context, logs io.Writer) (*EtcdProcess, error) {
	binary, env, err := EtcdCommand()
	if err != nil {
		return nil, err
	}
	p, err := startEtcdProcess(ctx, binary, env, logs)
	if err != nil {
		return nil, fmt.Errorf("etcd %s: %w", binary, err)
	}
	return p, nil
}

func startEtcdProcess(ctx context.Context, binary string, env []string, logs io.Writer) (*EtcdProcess, error) {
	// The data directory holds the socket, as upstream's does: its path
	// must stay under the 108 bytes of a unix socket address.
	dir, err := os.MkdirTemp("", "schedq-etcd-")
	if err != nil {
		return nil, err
	}
	socket := filepath.Join(dir, "etcd.sock")
	args := etcdArgs(dir, socket, os.Getenv(EtcdUnsafeNoFsyncEnv) != "")
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	if logs == nil {
		logs = io.Discard
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	setParentDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p := &EtcdProcess{URL: "unix://" + socket, Binary: binary, Args: args, cmd: cmd, dir: dir, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()

	client := unixClient(socket)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if healthy(ctx, client, "http://etcd") {
			return p, nil
		}
		select {
		case <-p.done:
			os.RemoveAll(dir)
			return nil, errors.New("exited before it was healthy")
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

// unixClient is an HTTP client that reaches every host through socket.
func unixClient(socket string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
	}}
}

// healthy reports whether etcd at base answers /health with a leader.
func healthy(ctx context.Context, client *http.Client, base string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	return resp.StatusCode == http.StatusOK && strings.Contains(string(b), `"health":"true"`)
}

// PID is the process's id.
func (p *EtcdProcess) PID() int { return p.cmd.Process.Pid }

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
