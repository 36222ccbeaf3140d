package clusterconfig

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestScrubPaths(t *testing.T) {
	tmp := os.TempDir()
	for _, tc := range []struct{ name, in, want string }{
		{"flag and value", "--data-dir " + tmp + "/schedq-etcd-123", "--data-dir DIR"},
		{"flag=value", "--data-dir=" + tmp + "/integration_test_etcd_data42", "--data-dir=DIR"},
		{"socket URL", "unix://" + tmp + "/schedq-etcd-123/etcd.sock", "unix://DIR/etcd.sock"},
		{"list", "[unix://" + tmp + "/a/etcd.sock]", "[unix://DIR/etcd.sock]"},
		{"other paths stay", "--config /etc/etcd.conf http://127.0.0.1:0", "--config /etc/etcd.conf http://127.0.0.1:0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := scrubPaths(tc.in); got != tc.want {
				t.Errorf("scrubPaths(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestHasFlag(t *testing.T) {
	args := []string{"--data-dir", "/d", "-log-level", "warn", "--listen-client-urls=unix:///s"}
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"data-dir", true}, {"log-level", true}, {"listen-client-urls", true}, {"listen-peer-urls", false}, {"data", false},
	} {
		if got := hasFlag(args, tc.name); got != tc.want {
			t.Errorf("hasFlag(%q) = %t, want %t", tc.name, got, tc.want)
		}
	}
}

// TestFindEtcd finds a child by its etcd-shaped command line, and only a
// child of the given process.
func TestFindEtcd(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if _, err := FindEtcd(os.Getpid()); err == nil {
		t.Fatal("found an etcd before starting one")
	}
	// A stand-in with etcd's command line: this test binary, sleeping.
	dir, err := os.MkdirTemp("", "clusterconfig-") // one level below TMPDIR, as etcd's
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSleep$", "--",
		"--data-dir", dir, "--listen-client-urls", "unix://"+dir+"/etcd.sock")
	cmd.Env = append(os.Environ(), "CLUSTERCONFIG_TEST_SLEEP=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	e, err := FindEtcd(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if e.PID != cmd.Process.Pid {
		t.Errorf("PID %d, want %d", e.PID, cmd.Process.Pid)
	}
	if !strings.HasSuffix(Args(e), " -- --data-dir DIR --listen-client-urls unix://DIR/etcd.sock") {
		t.Errorf("Args = %q, want the directory as DIR", Args(e))
	}
	if _, err := FindEtcd(e.PID); err == nil {
		t.Error("found an etcd started by the etcd itself")
	}
}

// TestHelperSleep is TestFindEtcd's stand-in process.
func TestHelperSleep(t *testing.T) {
	if os.Getenv("CLUSTERCONFIG_TEST_SLEEP") != "1" {
		t.Skip("a helper process of TestFindEtcd")
	}
	time.Sleep(time.Minute)
}
