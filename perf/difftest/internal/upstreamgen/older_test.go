package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestOlderVersions_rules checks the version table against older/: for
// every version v1.X where the driver's API changes (a before-v1.X and
// from-v1.X pair), each version takes from-v1.X if it is v1.X or later and
// before-v1.X otherwise, and no other rule file.
func TestOlderVersions_rules(t *testing.T) {
	entries, err := olderFS.ReadDir("older")
	if err != nil {
		t.Fatal(err)
	}
	rule := regexp.MustCompile(`^(before|from)-v1\.(\d+)\.go\.txt$`)
	changes := map[int]int{}
	for _, e := range entries {
		if m := rule.FindStringSubmatch(e.Name()); m != nil {
			minor, _ := strconv.Atoi(m[2])
			changes[minor]++
		}
	}
	if len(changes) == 0 {
		t.Fatal("no before-v1.X/from-v1.X files in older/")
	}
	for minor, n := range changes {
		if n != 2 {
			t.Errorf("v1.%d: %d of before-v1.%d.go.txt and from-v1.%d.go.txt, want both", minor, n, minor, minor)
		}
	}
	for _, row := range olderVersions {
		minor, err := strconv.Atoi(strings.Split(row.version, ".")[1])
		if err != nil {
			t.Fatalf("%s: %v", row.version, err)
		}
		want := map[string]bool{}
		for c := range changes {
			if minor >= c {
				want["from-v1."+strconv.Itoa(c)+".go.txt"] = true
			} else {
				want["before-v1."+strconv.Itoa(c)+".go.txt"] = true
			}
		}
		got := map[string]bool{}
		for _, r := range row.rules {
			got[r] = true
		}
		if len(got) != len(row.rules) || len(got) != len(want) {
			t.Errorf("%s takes %v, want %v", row.version, row.rules, want)
			continue
		}
		for r := range want {
			if !got[r] {
				t.Errorf("%s takes %v, want %v", row.version, row.rules, want)
				break
			}
		}
	}
}

// TestSelectVersions: -versions names rows of a version table; one that is
// not there is an error naming the known ones, for -older and -controlplane
// alike, never a silent skip.
func TestSelectVersions(t *testing.T) {
	v := func(r controlPlaneVersion) string { return r.version }
	table := []controlPlaneVersion{{version: "v1.35.4"}, {version: "v1.36.3"}}
	for _, c := range []struct {
		only, want, err string
	}{
		{"", "v1.35.4,v1.36.3", ""},
		{"v1.36.3", "v1.36.3", ""},
		{"v1.36.3, v1.35.4", "v1.36.3,v1.35.4", ""},
		{"v1.36", "", `"v1.36" is not in the version table (t): v1.35.4, v1.36.3`},
		{"v1.36.3,v1.99.0", "", `"v1.99.0" is not in the version table`},
	} {
		rows, err := selectVersions(table, v, c.only, "t")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("-versions %q: error %v, want one saying %s", c.only, err, c.err)
			}
			continue
		}
		var got []string
		for _, r := range rows {
			got = append(got, r.version)
		}
		if err != nil || strings.Join(got, ",") != c.want {
			t.Errorf("-versions %q: %v, %v; want %s", c.only, got, err, c.want)
		}
	}
	if _, err := selectVersions(olderVersions, func(r olderVersion) string { return r.version }, "v1.37.2", "olderVersions"); err == nil {
		t.Error("-older -versions v1.37.2 (perf/go.mod's own version) was accepted")
	}
}
