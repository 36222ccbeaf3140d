package queue

import (
	"encoding/json"
	"testing"
)

// TestLocation_spellings: each place's three spellings, and that each
// reads back.
func TestLocation_spellings(t *testing.T) {
	for _, tc := range []struct {
		loc   Location
		word  string
		label string
	}{
		{LocationActive, "activeQ", LabelActive},
		{LocationBackoff, "backoffQ", LabelBackoff},
		{LocationErrorBackoff, "errorBackoffQ", LabelBackoff},
		{LocationUnschedulable, "unschedulablePods", LabelUnschedulable},
		{LocationGated, "gated", LabelGated},
		{LocationIncomplete, "incompletePodGroupPods", LabelIncomplete},
		{LocationPending, "pendingPodGroupPods", LabelPending},
		{LocationInFlight, "inFlight", ""},
		{LocationUnknown, "unknown", ""},
	} {
		t.Run(string(tc.loc), func(t *testing.T) {
			if got := tc.loc.Word(); got != tc.word {
				t.Errorf("Word() = %q, want %q", got, tc.word)
			}
			for _, s := range []string{tc.word, string(tc.loc)} {
				if got, err := ParseLocation(s); err != nil || got != tc.loc {
					t.Errorf("ParseLocation(%q) = %q, %v", s, got, err)
				}
			}
			b, err := json.Marshal(struct{ Q Location }{tc.loc})
			if err != nil || string(b) != `{"Q":"`+tc.word+`"}` {
				t.Errorf("JSON = %s, %v", b, err)
			}
			var back struct{ Q Location }
			if err := json.Unmarshal(b, &back); err != nil || back.Q != tc.loc {
				t.Errorf("JSON read back %q, %v", back.Q, err)
			}
			if tc.label != "" && tc.loc != LocationErrorBackoff && QueueWord(tc.label) != tc.word {
				t.Errorf("QueueWord(%q) = %q, want %q", tc.label, QueueWord(tc.label), tc.word)
			}
		})
	}
	if _, err := ParseLocation("activeq"); err == nil {
		t.Error("ParseLocation took a misspelt word")
	}
	if got := QueueWord("future"); got != "future" {
		t.Errorf("QueueWord of an unknown label = %q, want it as it is", got)
	}
}
