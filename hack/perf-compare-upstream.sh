#!/usr/bin/env bash
# make perf-compare-upstream: the same workloads through upstream's own
# scheduler_perf harness (k8s.io/kubernetes at perf/go.mod's version,
# unmodified: perf/upstreambench calls its RunBenchmarkPerfScheduling) and
# through `schedq-perf run` on the embedded control plane, interleaved run by
# run on this machine; then perf/hack/perfcompare sets each side's per-run
# SchedulingThroughput, its load average and its configuration (read from
# the running clusters) side by side, with the ratio of the medians.
#
# Usage: hack/perf-compare-upstream.sh OUT RUNS [NAME ...]
#   NAME is one of the comparisons below (default: all of them).
# Environment: GO, PERF_PROFILE=DIR (a CPU profile of each run's control
# plane process into DIR), PERF_SCHEDQ_BIN=FILE (another schedq-perf binary to
# compare, e.g. an older commit's, run where it lies: with no etcd beside it
# the binary chooses its own etcd, as it would for a user who built it alone).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
go=${GO:-go}
out=${1:?usage: $0 OUT RUNS [NAME ...]}
runs=${2:?usage: $0 OUT RUNS [NAME ...]}
shift 2
profile=${PERF_PROFILE:-}

# upstream's own config files, unmodified, from the module cache.
kdir=$(cd perf && "$go" list -m -f '{{.Dir}}' k8s.io/kubernetes)
sp=$kdir/test/integration/scheduler_perf

# NAME FILE TESTCASE/WORKLOAD
comparisons=(
	# upstream's SchedulingBasic with 5,000 measured pods (its 500Nodes
	# measures 1,000: two or three one-second samples).
	"basic $root/perf/testdata/scheduling-basic.yaml SchedulingBasic/500Nodes_5000Pods"
	# upstream's own file: 500 nodes in one zone, 500 pods, then 1,000
	# measured pods with required pod affinity.
	"affinity $sp/affinity/performance-config.yaml SchedulingPodAffinity/500Nodes"
)
want=("$@")

[ -x bin/schedq-perf ] && [ -x bin/etcd ] || { echo "bin/schedq-perf and bin/etcd are missing: make build-perf etcd" >&2; exit 1; }
schedq=${PERF_SCHEDQ_BIN:-bin/schedq-perf}
[ -x "$schedq" ] || { echo "PERF_SCHEDQ_BIN=$schedq: not an executable file" >&2; exit 1; }
echo "== schedq-perf: $schedq$( [ -x "$(dirname "$schedq")/etcd" ] && echo ", with the etcd beside it" || echo ", no etcd binary beside it")"
rm -rf "$out" && mkdir -p "$out"
[ -z "$profile" ] || mkdir -p "$profile"
echo "== upstream's scheduler_perf harness ($(cd perf && "$go" list -m -f '{{.Path}} {{.Version}}' k8s.io/kubernetes)): building perf/upstreambench"
(cd perf && "$go" test -c -o "$out/upstreambench.test" ./upstreambench/)

load() { cut -d' ' -f1-3 /proc/loadavg; }
for c in "${comparisons[@]}"; do
	read -r name file wl <<<"$c"
	if [ ${#want[@]} -gt 0 ] && ! printf '%s\n' "${want[@]}" | grep -qx "$name"; then continue; fi
	tc=${wl%%/*} w=${wl#*/}
	for i in $(seq "$runs"); do
		d=$out/$name/upstream/$i
		mkdir -p "$d"
		echo "== $name run $i/$runs: upstream's harness, $wl (log: $d.log; load $(load))"
		load >"$d/load"
		(cd perf/upstreambench && PATH="$root/bin:$PATH" "$out/upstreambench.test" -test.run '^$' \
			-test.bench "BenchmarkPerfScheduling/^$tc\$/^$w\$" -test.benchtime 1x -test.timeout 30m \
			${profile:+-test.cpuprofile "$profile/$name-upstream-$i.cpu.pprof"} \
			-config "$file" -perf-scheduling-label-filter= -data-items-dir "$d") >"$d.log" 2>&1 ||
			{ tail -50 "$d.log"; exit 1; }
		load >>"$d/load"
		d=$out/$name/schedq-perf/$i
		mkdir -p "$d"
		echo "== $name run $i/$runs: schedq-perf, $wl (log: $d.log; load $(load))"
		load >"$d/load"
		${profile:+env SCHEDQ_PERF_CPUPROFILE="$profile/$name-schedq-perf-$i"} \
			"$schedq" run "$file" --test-case "$tc" --workload "$w" --out "$d" >"$d.log" 2>&1 ||
			{ tail -50 "$d.log"; exit 1; }
		load >>"$d/load"
	done
	(cd perf && "$go" run ./hack/perfcompare -workload "$wl" -upstream "$out/$name/upstream" \
		-ours "$out/$name/schedq-perf" -o "$out/$name/compare.txt")
done
