package workload

import (
	"fmt"
	"testing"
)

// TestSomeComboMatches checks the shortcut against listing the combinations,
// as upstream's isValid does.
func TestSomeComboMatches(t *testing.T) {
	lvSets := [][]*LabelValues{
		nil,
		{{Label: "a", Values: []string{"1", "2"}}},
		{{Label: "a", Values: []string{"1"}}, {Label: "b", Values: []string{"x", "y"}}},
		{{Label: "a", Values: []string{"1"}}, {Label: "a", Values: []string{"2"}}},
		{{Label: "a", Values: []string{"1"}}, {Label: "b", Values: nil}},
	}
	requireds := []map[string]string{
		nil, {"a": "1"}, {"a": "2"}, {"b": "y"}, {"a": "1", "b": "x"}, {"a": "2", "b": "z"}, {"c": "1"},
	}
	for i, lvs := range lvSets {
		for j, required := range requireds {
			t.Run(fmt.Sprintf("%d/%d", i, j), func(t *testing.T) {
				want := false
				for _, combo := range UniqueLabelCombos(lvs) {
					ok := true
					for k, v := range required {
						if combo[k] != v {
							ok = false
						}
						if _, present := combo[k]; !present {
							ok = false
						}
					}
					want = want || ok
				}
				if got := someComboMatches(lvs, required); got != want {
					t.Errorf("someComboMatches(%v, %v) = %v, want %v", lvs, required, got, want)
				}
			})
		}
	}
}
