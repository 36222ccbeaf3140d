#!/usr/bin/env bash
# make upstream-configs: every scheduler_perf config file of the Kubernetes
# version perf/ builds (its copies in pkg/workload/testdata/upstream-<version>/,
# unmodified) run by `schedq-perf run FILE --label-filter integration-test` on
# the embedded control plane, one file after the other. Prints a Markdown
# table: file, workloads run / failed, rc, the mean throughput of the measured
# windows, and for a file that did not pass, the first reason it gives.
# Each file gets at most UPSTREAM_CONFIGS_TIMEOUT (default 15m); results go to
# perf/out/upstream-configs/<file's directory>.
set -uo pipefail
cd "$(dirname "$0")/.."

version=$(awk '$1 == "k8s.io/kubernetes" { print $2 }' perf/go.mod)
dir=pkg/workload/testdata/upstream-$version
out=perf/out/upstream-configs
limit=${UPSTREAM_CONFIGS_TIMEOUT:-15m}
[ -d "$dir" ] || { echo "no copy of scheduler_perf $version's config files in $dir" >&2; exit 1; }
[ -x bin/schedq-perf ] || { echo "bin/schedq-perf is missing: make build-perf" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 reads the results; install it (apt-get install python3)" >&2; exit 1; }

files=$(cd "$dir" && find . -name performance-config.yaml | sed 's|^\./||' | sort)
n=$(echo "$files" | wc -l)
echo "scheduler_perf $version: $n config files at integration-test size on the embedded control plane (log and results: $out)" >&2
printf '| file | workloads run (failed) | rc | throughput, mean of measured windows (pods/s) | reason |\n|---|---|---|---|---|\n'
i=0
for f in $files; do
	i=$((i + 1))
	name=${f%/performance-config.yaml}
	res=$out/$name
	rm -rf "$res"
	mkdir -p "$(dirname "$res")"
	began=$(date +%s)
	echo "[$i/$n] $name" >&2
	timeout --foreground "$limit" bin/schedq-perf run "$dir/$f" --label-filter integration-test --out "$res" >"$res.log" 2>&1
	rc=$?
	echo "[$i/$n] $name: rc $rc in $(( $(date +%s) - began ))s" >&2
	python3 - "$res/results.json" "$res.log" "$rc" "$name" <<'PY'
import json, sys
path, log, rc, name = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
try:
    runs = json.load(open(path))
except (OSError, ValueError):
    runs = []
failed = [r for r in runs if r.get("error")]
tputs = []
for r in runs:
    # Upstream's throughput item is labelled Metric=SchedulingThroughput
    # (util.go); at integration-test size a window is often too short for a
    # sample, and the item then has no Average.
    for d in r.get("dataItems") or []:
        if d.get("labels", {}).get("Metric") == "SchedulingThroughput" and (d.get("data") or {}).get("Average") is not None:
            tputs.append(d["data"]["Average"])
tput = "%.1f" % (sum(tputs) / len(tputs)) if tputs else "-"
reason = ""
if rc != 0:
    if failed:
        reason = failed[0]["error"].split(": ", 1)[-1]
    else:
        lines = [l for l in open(log, errors="replace") if l.startswith("error: ")]
        reason = lines[0][7:].strip() if lines else ("timed out" if rc == 124 else "rc %d" % rc)
    reason = reason.replace("|", "\\|")[:240]
print("| %s | %d (%d) | %d | %s | %s |" % (name, len(runs), len(failed), rc, tput, reason))
PY
done
