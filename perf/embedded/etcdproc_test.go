package embedded

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"
)

// TestEtcdProcess: workload runs get an etcd in a process of its own even
// without an etcd binary beside the executable (a test binary has none: it
// runs itself as etcd), serving the unix socket upstream's harness uses,
// with its WAL fsynced unless EtcdUnsafeNoFsyncEnv says; stopping it leaves
// no process and no data.
func TestEtcdProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	for _, noFsync := range []bool{false, true} {
		t.Run(map[bool]string{false: "fsync", true: "unsafe-no-fsync"}[noFsync], func(t *testing.T) {
			t.Setenv(EtcdUnsafeNoFsyncEnv, map[bool]string{false: "", true: "1"}[noFsync])
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p, err := StartEtcdProcess(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			exe, _ := os.Executable()
			if p.Binary != exe {
				t.Errorf("etcd ran %s, want this test binary %s (no etcd beside it)", p.Binary, exe)
			}
			if got := slices.Contains(p.Args, "--unsafe-no-fsync"); got != noFsync {
				t.Errorf("--unsafe-no-fsync in %q: %t, want %t", p.Args, got, noFsync)
			}
			if p.URL != "unix://"+p.dir+"/etcd.sock" {
				t.Errorf("URL %s, want the socket in its data directory %s", p.URL, p.dir)
			}
			if !healthy(ctx, unixClient(p.dir+"/etcd.sock"), "http://etcd") {
				t.Fatal("etcd is not healthy")
			}
			if err := p.Stop(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(p.dir); !os.IsNotExist(err) {
				t.Errorf("etcd's data dir is still there: %v", err)
			}
			select {
			case <-p.done:
			default:
				t.Error("etcd still runs after Stop")
			}
		})
	}
}
