#!/usr/bin/env bash
# Records the runs the monitoring mixin's alert tests replay: each workload
# on the embedded control plane (bin/schedq-perf, `make build-perf`), its
# queue series (one sample a second) copied to mixin/testdata/recordings as
# <name>.gate-on.json / <name>.gate-off.json. Takes about fifteen minutes,
# seven of them ParkedUntilFlush waiting for the leftover flush.
# Usage: hack/mixin-recordings.sh [NAME...]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
PERF=${PERF:-bin/schedq-perf}
DEST=mixin/testdata/recordings
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$DEST"

# name | file | schedq-perf selection | both gate settings, or the default (on)
RUNS=(
  "backoff-drain|workloads/backoff-drain.yaml|--workload 4Nodes_40Blocked|compare"
  "error-backoff|workloads/error-backoff.yaml|--test-case ErrorBackoffBindingDenied --workload 4DenyNodes_40Pods|compare"
  "gated-burst|workloads/gated-burst.yaml|--label-filter integration-test|compare"
  "tiny|perf/testdata/tiny.yaml|--test-case Tiny --workload 10Nodes|compare"
  "cluster-full|mixin/testdata/workloads/runs.yaml|--test-case ClusterFull --label-filter integration-test|default"
  "parked-until-flush|mixin/testdata/workloads/runs.yaml|--test-case ParkedUntilFlush --label-filter integration-test|default"
)

# copy DIR GLOB NAME: the one queue series in DIR matching GLOB → NAME.
copy() {
  local series=("$1"/queue_$2.json)
  if [ "${#series[@]}" -ne 1 ] || [ ! -f "${series[0]}" ]; then
    echo "want one queue series $1/queue_$2.json, got: ${series[*]}" >&2
    exit 1
  fi
  cp "${series[0]}" "$DEST/$3"
}

for run in "${RUNS[@]}"; do
  IFS='|' read -r name file selection gates <<<"$run"
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
    continue
  fi
  out="$WORK/$name"
  compare=()
  [ "$gates" = compare ] && compare=(--compare SchedulerPopFromBackoffQ)
  echo "== $name ($gates)"
  # shellcheck disable=SC2086 # selection is several flags
  "$PERF" run "$file" $selection "${compare[@]}" --out "$out" >"$out.log" 2>&1 \
    || { tail -30 "$out.log"; exit 1; }
  if [ "$gates" = compare ]; then
    copy "$out" '*SchedulerPopFromBackoffQ_true' "$name.gate-on.json"
    copy "$out" '*SchedulerPopFromBackoffQ_false' "$name.gate-off.json"
  else
    copy "$out" '*' "$name.gate-on.json"
  fi
done
