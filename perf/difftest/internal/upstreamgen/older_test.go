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
