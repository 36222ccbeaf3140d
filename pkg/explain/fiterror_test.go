package explain

import (
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestParseFitError(t *testing.T) {
	tests := []struct {
		name        string
		msg         string
		ok          bool
		nodes       int
		plugins     []string
		reasons     int
		prefilter   string
		post        string
		unknownSeen bool
	}{
		{
			name: "histogram with preemption", ok: true, nodes: 5, reasons: 2,
			msg:     "0/5 nodes are available: 3 Insufficient cpu, 2 node(s) had untolerated taint(s). preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod.",
			plugins: []string{"NodeResourcesFit", "TaintToleration"},
			post:    "preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod.",
		},
		{
			name: "single reason", ok: true, nodes: 1, reasons: 1,
			msg:     "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.",
			plugins: []string{"NodeAffinity"},
		},
		{
			name: "prefilter", ok: true, nodes: 3, prefilter: "pod has unbound immediate PersistentVolumeClaims",
			msg:     "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: not eligible due to preemptionPolicy=Never.",
			plugins: []string{"VolumeBinding"}, post: "preemption: not eligible due to preemptionPolicy=Never.",
		},
		{
			name: "out-of-tree reason", ok: true, nodes: 2, reasons: 1, unknownSeen: true,
			msg:     "0/2 nodes are available: 2 node(s) lacked the magic, sadly.",
			plugins: []string{},
		},
		{name: "error", msg: "no nodes available to schedule pods"},
		{name: "bind error", msg: `running Bind plugin "DefaultBinder": pods "p" is forbidden`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fe, ok := ParseFitError(tt.msg)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if fe.NumAllNodes != tt.nodes || len(fe.Reasons) != tt.reasons || fe.PreFilterMsg != tt.prefilter || fe.PostFilterMsg != tt.post {
				t.Errorf("got %+v", fe)
			}
			if got := fe.Plugins(); !reflect.DeepEqual(got, tt.plugins) {
				t.Errorf("plugins = %v, want %v", got, tt.plugins)
			}
			if got := len(fe.UnknownReasons()) > 0; got != tt.unknownSeen {
				t.Errorf("unknown reasons = %v", fe.UnknownReasons())
			}
		})
	}
}

// parseFitErrorPattern is ParseFitError as it read messages with regular
// expressions, before it parsed them by hand: the reference the hand parser
// is held to.
func parseFitErrorPattern(msg string) (fe FitError, ok bool) {
	m := regexp.MustCompile(`^0/(\d+) nodes are available:\s*(.*)$`).FindStringSubmatch(strings.TrimSpace(msg))
	if m == nil {
		return fe, false
	}
	countRE := regexp.MustCompile(`^(\d+) (.+)$`)
	fe.NumAllNodes, _ = strconv.Atoi(m[1])
	body := m[2]
	filter, post := body, ""
	if i := strings.Index(body, ". "); i >= 0 {
		filter, post = body[:i], strings.TrimSpace(body[i+2:])
	} else {
		filter = strings.TrimSuffix(body, ".")
	}
	fe.PostFilterMsg = post
	var entries []string
	for _, p := range strings.Split(filter, ", ") {
		if countRE.MatchString(p) || len(entries) == 0 {
			entries = append(entries, p)
		} else {
			entries[len(entries)-1] += ", " + p
		}
	}
	for _, e := range entries {
		c := countRE.FindStringSubmatch(e)
		if c == nil {
			fe.PreFilterMsg = filter
			fe.Reasons = nil
			return fe, true
		}
		n, _ := strconv.Atoi(c[1])
		fe.Reasons = append(fe.Reasons, NodeReason{Count: n, Reason: c[2], Plugin: PluginForReason(c[2])})
	}
	return fe, true
}

var fitErrorSeeds = []string{
	"0/5 nodes are available: 3 Insufficient cpu, 2 node(s) had untolerated taint(s). preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod.",
	"0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.",
	"0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: not eligible.",
	"0/4 nodes are available: 4 node(s) had untolerated taint {a: b}, c.",
	"  0/12 nodes are available:\n 12 Insufficient memory.  ",
	"0/2 nodes are available: 2 x\ny.",
	"0/2 nodes are available:",
	"0/2 nodes are available: 2 ",
	"0/2 nodes are available: 2  x, 3, 4 y",
	"0/ nodes are available: 1 x.",
	"0/99999999999999999999 nodes are available: 1 x.",
	"0/1 nodes are available: 1 \xff\xfe.",
	"no nodes available to schedule pods",
	"",
}

// TestParseFitErrorMatchesPattern holds the hand parser to the regular
// expressions it replaced.
func TestParseFitErrorMatchesPattern(t *testing.T) {
	for _, msg := range fitErrorSeeds {
		got, gotOK := ParseFitError(msg)
		want, wantOK := parseFitErrorPattern(msg)
		if gotOK != wantOK || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseFitError(%q) = %+v, %v; the pattern reads %+v, %v", msg, got, gotOK, want, wantOK)
		}
	}
}

func FuzzParseFitError(f *testing.F) {
	for _, msg := range fitErrorSeeds {
		f.Add(msg)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		got, gotOK := ParseFitError(msg)
		want, wantOK := parseFitErrorPattern(msg)
		if gotOK != wantOK || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseFitError(%q) = %+v, %v; the pattern reads %+v, %v", msg, got, gotOK, want, wantOK)
		}
	})
}
