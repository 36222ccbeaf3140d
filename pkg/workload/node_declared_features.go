package workload

import (
	"fmt"
	"sort"
)

// NodeDeclaredFeaturesParam is the param upstream's nodedeclaredfeatures
// harness reads (node_declared_features_test.go, v1.37.2): how many
// features each node declares.
const NodeDeclaredFeaturesParam = "numNodeDeclaredFeatures"

// nodeDeclaredFeatures is upstream's updateNodesWithDeclaredFeatures'
// choice of features: Feature1 … FeatureN, sorted as strings, for a
// workload that turns NodeDeclaredFeatures on in its own featureGates, N
// being the param (0 when absent). Upstream runs the hook only for the
// files of its nodedeclaredfeatures directory; here the param marks them,
// so a workload without it gets no hook (ok is false).
//
// Upstream's preRun hook also swaps the NDF library's feature registry for
// N mock features; in v1.37.2 the scheduler's plugin uses the registry
// built when the library was loaded (ndf.DefaultFramework), so that swap
// does not reach the scheduler and is not repeated here.
func nodeDeclaredFeatures(w *Workload) (feats []string, ok bool, err error) {
	if _, defined := w.Params[NodeDeclaredFeaturesParam]; !defined || !w.FeatureGates["NodeDeclaredFeatures"] {
		return nil, false, nil
	}
	n, err := (&Selected{Params: w.Params}).Param(NodeDeclaredFeaturesParam)
	if err != nil {
		return nil, false, err
	}
	if n < 0 {
		return nil, false, fmt.Errorf("param %q must not be negative, got %d", NodeDeclaredFeaturesParam, n)
	}
	feats = []string{}
	for i := 1; i <= n; i++ {
		feats = append(feats, fmt.Sprintf("Feature%d", i))
	}
	sort.Strings(feats)
	return feats, true, nil
}
