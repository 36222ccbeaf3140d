// Package workload reads scheduler_perf workload files: the
// performance-config.yaml format of k8s.io/kubernetes
// test/integration/scheduler_perf (v1.37.2), with upstream's strictness, so
// that a file this package accepts runs unmodified upstream and a file
// upstream accepts is accepted here.
//
// # Using it
//
//	f, err := workload.Load("workloads/backoff.yaml")  // parse + file-level validation
//	sel, err := f.Select("", "", workload.DefaultPerfLabelFilter)
//	for _, s := range sel {                             // one per workload to run
//		gates, emulationVersion := s.EffectiveFeatureGates()
//		// start a control plane with gates and s.SchedulerConfigPath …
//		for _, op := range s.Ops {
//			switch op := op.(type) {
//			case *workload.CreateNodes:
//				for i := 0; i < op.Count; i++ { node, err := op.Node(i); … }
//			case *workload.CreatePods:
//				pod, err := op.Pod(i, op.Count) // in op.Namespace
//			case *workload.Barrier, *workload.Churn, …:
//			}
//		}
//		threshold := s.Threshold.Get(topic) // compare s.ThresholdMetricSelector's bucket
//	}
//
// Load (or Parse) does what upstream does when it reads a file; Select does,
// for the workloads it picks, what upstream does before and while it runs
// them (see its doc), so that a mistake is reported before a control plane
// starts. A Selected is self-contained: params bound (Selected.Params keeps
// the values), createPodSets unrolled into createPods, namespaces and the pod
// template defaulted, every path resolved, every file read, every template
// parsed and rendered once. Ops are a closed set of types implementing Op.
//
// # Where things are
//
// A workload goes down these files in order: parse.go (Load, Parse: the
// file, its test cases and workloads) with decode.go (upstream's structs
// and each op's decoding); select.go (Select: which workloads, and each one
// bound); the ops_*.go files (each op as written, with its isValid and its
// bind, upstream's patchParams, next to the Op it binds to); bind.go (params
// and defaults an op's bind uses); load.go and template.go (reading the
// files ops name, rendering templates). ops.go lists the opcodes: adding an
// op is adding its type in an ops_*.go file and its line in rawOps.
//
// # Format, as upstream reads it
//
// The file is a YAML list of test cases. YAML is converted to JSON and
// decoded by encoding/json (sigs.k8s.io/yaml.UnmarshalStrict): duplicate keys
// and unknown fields are errors, and keys match Go field names without
// regard to case (countParam, CountParam and countparam are the same key).
// It is YAML 1.1: unquoted y, n, yes, no, on and off are booleans, also as
// map keys. Each op is decoded twice: its opcode first, then the whole object
// into that opcode's fields.
//
// Only fields named …Param take a reference, "$name", to the workload's
// params (countParam, countMultiplierParam, durationParam, steadyStateParam,
// signatureBatchSizeParam); a param's JSON type must match (numbers for
// counts, strings such as "10s" for durations, booleans for steadyState) and
// every param must be used by some op. templateParams (createNodes,
// createPods, createAny, createPodGroups) are values the template sees:
// "$name" takes the param, "$name|default" falls back to the YAML default.
//
// Object templates (nodeTemplatePath, podTemplatePath,
// defaultPodTemplatePath, createAny, updateAny and createPodGroups'
// templatePath) are Go text/templates rendered with templateParams, .Index
// and .Count (pod groups: no .Count) and TemplateFuncs; a pod made from a
// template is labelled signature=signature-label-<index/signatureBatchSize>.
// Namespace, PV, PVC, ResourceClaim and churn templates are plain YAML.
//
// Ops with an optional namespace (createPods, churn) default to
// namespace-<opIndex>, where opIndex is the op's position after
// createPodSets are unrolled (OpPos.Index); default nodes are named
// node-<opIndex>-<random>.
//
// Label filters (MatchLabels) are upstream's: "performance,-short" selects
// workloads labelled performance and not short, over the test case's and the
// workload's labels; go test -short appends "+short" (ShortLabelFilter).
//
// # Differences from upstream
//
//   - Relative paths in a file resolve against the file's directory.
//     Upstream resolves them against the working directory of go test,
//     which is the directory holding its config files, so upstream's files
//     mean the same thing here; a file kept elsewhere keeps working when
//     run from anywhere.
//   - createResourceDriver, which v1.37 removed, is rejected with an error
//     naming its replacement (createAny with a ResourceSlice template).
//   - Upstream finds a workload's mistakes while running it (an undefined
//     param at its op, an unused param at the end, a missing template when
//     the op starts); Select finds them before anything runs. It also
//     rejects what would crash or fail upstream at run time: a
//     stopCollectingMetrics without a start, overlapping collection windows,
//     an empty namespace, a PVC template without a PV template, a
//     labelNodePrepareStrategy without values, a negative churn interval.
//   - A createPodSets may unroll into at most 100000 createPods.
//   - Params read by Go code rather than ops (upstream's test hooks) must be
//     declared with WithExternalParams, except nodedeclaredfeatures'
//     numNodeDeclaredFeatures, whose hook Select itself reproduces
//     (Selected.NodeDeclaredFeatures).
//   - Feature gate names are not checked here (that needs the gate
//     registry of k8s.io/kubernetes): the runner checks them, as it does the
//     scheduler configuration's content.
//   - Errors name the file, test case, workload and op (see Error).
package workload
