package explain

import (
	"reflect"
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
