package embedded

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestEtcdProcess: the control plane runs against an etcd in a process of
// its own (as performance runs use it), and stopping it leaves no data.
// It needs an etcd binary (make etcd → bin/etcd, put on PATH by make test).
func TestEtcdProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	bin, err := exec.LookPath("etcd")
	if err != nil {
		t.Skip("no etcd on PATH (make etcd builds bin/etcd; make test-perf puts it on PATH)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := StartEtcdProcess(ctx, bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !healthy(ctx, p.URL) {
		t.Fatal("etcd is not healthy")
	}
	dir := p.dir
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Errorf("etcd's data dir is still there: %v", err)
	}
	select {
	case <-p.done:
	default:
		t.Error("etcd still runs after Stop")
	}
}
