package schedconfig

import (
	"path/filepath"
	"testing"
)

// FuzzParseConfigz feeds arbitrary bytes to ParseConfigz, seeded with every
// recorded /configz answer: it must not panic, and what it accepts must hold
// what the queue relies on.
func FuzzParseConfigz(f *testing.F) {
	for _, v := range recordedVersions {
		f.Add(readRecorded(f, v, "configz.json"))
	}
	f.Add([]byte(internalSmall))
	f.Add([]byte(v1Small))
	f.Add([]byte(`{"componentconfig":{"PodInitialBackoffSeconds":1e3,"PodMaxBackoffSeconds":-1,"Profiles":[null]}}`))
	f.Add([]byte("Forbidden\n"))
	f.Add([]byte(`{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[{"schedulerName":"s"}],"leaderElection":{"leaderElect":true,"resourceName":"s","resourceNamespace":""}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfigz(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if c.Shape != ShapeInternal && c.Shape != ShapeV1 {
			t.Fatalf("shape %q", c.Shape)
		}
		if c.PodInitialBackoffSeconds <= 0 || c.PodMaxBackoffSeconds < c.PodInitialBackoffSeconds {
			t.Fatalf("backoff %d..%d accepted", c.PodInitialBackoffSeconds, c.PodMaxBackoffSeconds)
		}
		if len(c.Profiles) == 0 {
			t.Fatal("no profiles accepted")
		}
		// The Lease is always named: what the document leaves out is
		// upstream's default.
		if le := c.LeaderElection; le.ResourceNamespace == "" || le.ResourceName == "" {
			t.Fatalf("leaderElection %+v names no Lease", le)
		}
		for _, p := range c.Profiles {
			if p.SchedulerName == "" {
				t.Fatal("a profile without a name accepted")
			}
			for _, s := range p.Plugins {
				if s.ExtensionPoint == "" || len(s.Enabled)+len(s.Disabled) == 0 {
					t.Fatalf("plugin set %+v", s)
				}
				for _, n := range append(append([]string{}, s.Enabled...), s.Disabled...) {
					if n == "" {
						t.Fatalf("a plugin without a name in %+v", s)
					}
				}
			}
		}
	})
}

// FuzzParseFlagz feeds arbitrary bytes to ParseFlagz under each content type
// kube-scheduler serves, seeded with every recorded /flagz answer.
func FuzzParseFlagz(f *testing.F) {
	for _, v := range recordedVersions {
		for _, name := range []string{"flagz.txt", "flagz.json"} {
			if data, ok := readRecordedIfAny(f, filepath.Join(v, name)); ok {
				f.Add(data, uint8(0))
				f.Add(data, uint8(1))
			}
		}
	}
	f.Add([]byte("kube-scheduler flags\nfeature-gates: :A=true,kube:B=false\n"), uint8(1))
	f.Add([]byte(`{"kind":"Flagz","apiVersion":"config.k8s.io/v1beta1","flags":{"pod-max-in-unschedulable-pods-duration":"1h"}}`), uint8(2))
	contentTypes := []string{"", "text/plain; charset=utf-8", "application/json"}
	f.Fuzz(func(t *testing.T, data []byte, ct uint8) {
		flags, err := ParseFlagz(data, contentTypes[int(ct)%len(contentTypes)])
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if flags.Values == nil {
			t.Fatal("nil Values accepted")
		}
		if d, ok, err := flags.PodMaxInUnschedulablePodsDuration(); err == nil && ok && d <= 0 {
			t.Fatalf("duration %v accepted", d)
		}
		_, _ = flags.FeatureGates()
	})
}
