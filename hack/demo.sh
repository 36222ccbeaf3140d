#!/usr/bin/env bash
# make demo: the main job on a fresh machine. Builds both binaries, starts the
# embedded control plane, fills its queues, shows `kubectl schedq status` and
# `kubectl schedq explain -A`, stops the control plane, then runs the
# backoff-drain workload with SchedulerPopFromBackoffQ on and off and prints
# the comparison. Leaves nothing running and no temporary files; the perf
# report stays in perf/out/demo.
set -euo pipefail
cd "$(dirname "$0")/.."

bold() { if [ -t 1 ]; then printf '\n\033[1m== %s\033[0m\n' "$*"; else printf '\n== %s\n' "$*"; fi; }
elapsed() { echo "$(( $(date +%s) - start ))s"; }
start=$(date +%s)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/schedq-demo.XXXXXX")
cluster_pid=""
cleanup() {
	if [ -n "$cluster_pid" ] && kill -0 "$cluster_pid" 2>/dev/null; then
		kill -INT "$cluster_pid" 2>/dev/null || true
		wait "$cluster_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# The Kubernetes version perf/ builds is the one perf/go.mod requires.
kube_version=$(awk '$1 == "k8s.io/kubernetes" { print $2 }' perf/go.mod)
bold "Building (the first run compiles a Kubernetes control plane — etcd, kube-apiserver, kube-scheduler $kube_version — which takes several minutes on 2 cores)"
make --no-print-directory build
if [ -x bin/schedq-perf ]; then
	echo "bin/schedq-perf exists; rebuilding what changed"
fi
# go build prints each package as it compiles it: the progress of a cold build.
(cd perf && go build -v -trimpath -ldflags "-X k8s.io/component-base/version.gitVersion=$kube_version" -o ../bin/schedq-perf ./cmd/schedq-perf 2>&1 |
	awk '{ n++; if (n % 50 == 0) { printf "  … %d packages compiled\n", n; fflush() } } END { if (n) printf "  %d packages compiled\n", n }')
test -x bin/schedq-perf
echo "built in $(elapsed)"

bold "Starting the embedded control plane (4 fake nodes, 4 CPUs each)"
bin/schedq-perf cluster up --nodes 4 --kubeconfig-out "$tmp/kubeconfig" >"$tmp/up.out" 2>"$tmp/up.err" &
cluster_pid=$!
for _ in $(seq 1 240); do
	grep -q '^ready' "$tmp/up.out" 2>/dev/null && break
	if ! kill -0 "$cluster_pid" 2>/dev/null; then
		echo "the control plane did not start:" >&2; cat "$tmp/up.err" >&2; exit 1
	fi
	sleep 0.5
done
grep -q '^ready' "$tmp/up.out" || { echo "the control plane was not ready after 2 minutes" >&2; cat "$tmp/up.err" >&2; exit 1; }
sed 's/^/  /' "$tmp/up.out"
export KUBECONFIG="$tmp/kubeconfig"

bold "Filling the queues: pods that bind, pods too big for any node, gated pods, pods whose binding is denied, a burst"
bin/schedq-perf demo-seed --kubeconfig "$KUBECONFIG"
sleep 3

bold "kubectl schedq status"
bin/kubectl-schedq status

bold "kubectl schedq explain -A"
bin/kubectl-schedq explain -A || true

bold "kubectl schedq explain -n demo big-0 deny-bind-0 gated-0"
bin/kubectl-schedq explain -n demo big-0 deny-bind-0 gated-0 || true

bold "Stopping the control plane"
kill -INT "$cluster_pid"
wait "$cluster_pid" || true
cluster_pid=""

bold "Backoff drain, SchedulerPopFromBackoffQ on vs off (workloads/backoff-drain.yaml, integration-test size)"
rm -rf perf/out/demo
bin/schedq-perf run workloads/backoff-drain.yaml --label-filter integration-test \
	--compare SchedulerPopFromBackoffQ --out perf/out/demo

bold "Done in $(elapsed); the perf report is perf/out/demo/report.html"
