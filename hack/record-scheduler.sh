#!/usr/bin/env bash
# Records what a real kube-scheduler of VERSION answers on /metrics, /configz
# and /flagz, into testdata/schedulers/VERSION/ (or OUTDIR).
#
# The kube-scheduler is built from Go modules: a throwaway module in a
# directory of RECORD_CACHE requires k8s.io/kubernetes@VERSION, with its staging
# modules replaced by k8s.io/*@v0.MINOR.PATCH as Kubernetes' own go.mod lists
# them. It runs as its own process, with its default configuration, against
# the embedded control plane of bin/schedq-perf (make build-perf), whose own
# scheduler is renamed so that only the recorded one schedules the pods this
# script creates: two that bind, one asking for more CPU than any node has
# (unschedulablePods), and one with a scheduling gate.
#
# Usage: hack/record-scheduler.sh VERSION [OUTDIR]
#   VERSION  a kube-scheduler release, e.g. v1.34.4
#   OUTDIR   where to write (default testdata/schedulers/VERSION)
# Environment:
#   FEATURE_GATES  passed to the recorded scheduler as --feature-gates
#                  (default: ComponentFlagz=true on v1.34 and v1.35, where
#                  /flagz is alpha and off; DRADeviceTaintRules=false on a
#                  v1.37 scheduler when the API server is older, as it does
#                  not serve the resource.k8s.io/v1 DeviceTaintRules that
#                  the scheduler waits to list; nothing otherwise)
#   RECORD_CACHE   where built schedulers are kept between runs
#                  (default ${TMPDIR:-/tmp}/schedq-record)
#   SECURE_PORT    the recorded scheduler's port on 127.0.0.1 (default 10959)
#   BUILD_ONLY=1   build the scheduler into RECORD_CACHE and stop
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
GO=${GO:-go}
die() { echo "record-scheduler: $*" >&2; exit 1; }
step() { echo "[record-scheduler] $*" >&2; }

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: hack/record-scheduler.sh VERSION [OUTDIR]"
VERSION=$1
[[ $VERSION =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || die "VERSION must read v1.MINOR.PATCH, got \"$VERSION\""
MINOR=${BASH_REMATCH[1]}
PATCH=${BASH_REMATCH[2]}
OUT=${2:-$ROOT/testdata/schedulers/$VERSION}
PERF=$ROOT/bin/schedq-perf
for tool in kubectl curl jq; do
	command -v "$tool" >/dev/null || die "$tool is not on PATH"
done
PORT=${SECURE_PORT:-10959}
CACHE=${RECORD_CACHE:-${TMPDIR:-/tmp}/schedq-record}
BIN=$CACHE/kube-scheduler-$VERSION

# build_scheduler builds kube-scheduler VERSION into $BIN unless it is there.
build_scheduler() {
	[ -x "$BIN" ] && { step "kube-scheduler $VERSION: $BIN (built before)"; return; }
	local mod=$CACHE/module-$VERSION dir
	rm -rf "$mod"
	mkdir -p "$mod"
	dir=$(cd "$mod" && "$GO" mod download -json "k8s.io/kubernetes@$VERSION" | jq -r .Dir)
	[ -f "$dir/go.mod" ] || die "k8s.io/kubernetes@$VERSION: no go.mod in the module cache"
	{
		echo "module schedq.local/record-scheduler"
		echo
		grep -m1 '^go ' "$dir/go.mod"
		echo
		echo "require k8s.io/kubernetes $VERSION"
		echo
		echo "replace ("
		# Every staging module Kubernetes replaces with ./staging/src/k8s.io/NAME
		# is published as k8s.io/NAME v0.MINOR.PATCH.
		sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/src/k8s.io/.*#\t\1 => \1 v0.'"$MINOR.$PATCH"'#p' "$dir/go.mod"
		echo ")"
	} >"$mod/go.mod"
	cat >"$mod/tools.go" <<-'GO'
	//go:build tools

	package tools

	import _ "k8s.io/kubernetes/cmd/kube-scheduler"
	GO
	step "kube-scheduler $VERSION: resolving modules in $mod"
	(cd "$mod" && "$GO" mod tidy >/dev/null)
	step "kube-scheduler $VERSION: building (minutes on a cold cache)"
	local kv=k8s.io/component-base/version
	(cd "$mod" && CGO_ENABLED=0 "$GO" build -trimpath \
		-ldflags "-X $kv.gitVersion=$VERSION -X $kv.gitMajor=1 -X $kv.gitMinor=$MINOR -X $kv.gitTreeState=clean -X $kv.buildDate=1970-01-01T00:00:00Z" \
		-o "$BIN.tmp" k8s.io/kubernetes/cmd/kube-scheduler)
	mv "$BIN.tmp" "$BIN"
}

mkdir -p "$CACHE"
build_scheduler
[ "${BUILD_ONLY:-}" = 1 ] && exit 0
[ -x "$PERF" ] || die "no $PERF: run make build-perf first"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/schedq-record.XXXXXX")
pids=()
cleanup() {
	local rc=$? pid
	if [ "$rc" != 0 ] && [ -f "$WORK/kube-scheduler.log" ]; then
		echo "record-scheduler: failed; the last lines kube-scheduler logged:" >&2
		tail -15 "$WORK/kube-scheduler.log" >&2
	fi
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

# The embedded control plane's own scheduler serves another scheduler name,
# so that the recorded one alone schedules the pods below.
cat >"$WORK/embedded-scheduler.yaml" <<-'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: schedq-embedded
YAML
step "control plane: $PERF cluster up --nodes 2"
"$PERF" cluster up --nodes 2 --scheduler-config "$WORK/embedded-scheduler.yaml" \
	--kubeconfig-out "$WORK/kubeconfig" >"$WORK/cluster-up.out" 2>"$WORK/cluster-up.log" &
pids+=($!)
for _ in $(seq 240); do
	grep -q '^ready' "$WORK/cluster-up.out" 2>/dev/null && break
	kill -0 "${pids[0]}" 2>/dev/null || { cat "$WORK/cluster-up.log" >&2; die "cluster up exited"; }
	sleep 0.5
done
grep -q '^ready' "$WORK/cluster-up.out" || die "cluster up was not ready after 2 minutes (log: $WORK/cluster-up.log)"
KUBECONFIG=$WORK/kubeconfig
export KUBECONFIG
TOKEN=$(kubectl config view --raw -o jsonpath='{.users[0].user.token}')
[ -n "$TOKEN" ] || die "the kubeconfig of cluster up has no token"

if [ -z "${FEATURE_GATES+set}" ]; then
	gates=()
	[ "$MINOR" -lt 36 ] && gates+=(ComponentFlagz=true)
	server_minor=$(kubectl version -o json 2>/dev/null | jq -r '.serverVersion.minor' | tr -dc 0-9)
	[ "$MINOR" -ge 37 ] && [ "$server_minor" -lt 37 ] && gates+=(DRADeviceTaintRules=false)
	FEATURE_GATES=$(IFS=,; echo "${gates[*]}")
fi

# The scheduler runs as kubeadm runs it, minus leader election: delegated
# authentication and authorization through the API server, so the reads
# below are authorised as RBAC authorises them (the kubeconfig's user is in
# system:masters).
args=(
	--kubeconfig="$KUBECONFIG"
	--authentication-kubeconfig="$KUBECONFIG"
	--authorization-kubeconfig="$KUBECONFIG"
	--leader-elect=false
	--bind-address=127.0.0.1
	--secure-port="$PORT"
)
[ -n "$FEATURE_GATES" ] && args+=(--feature-gates="$FEATURE_GATES")
step "kube-scheduler $VERSION ${args[*]}"
"$BIN" "${args[@]}" >"$WORK/kube-scheduler.log" 2>&1 &
pids+=($!)
BASE=https://127.0.0.1:$PORT
get() { # get PATH [ACCEPT]: the body; the Content-Type into $WORK/content-type
	curl -sS --fail --max-time 20 -k -H "Authorization: Bearer $TOKEN" \
		${2:+-H "Accept: $2"} -D "$WORK/headers" "$BASE$1" || return
	tr -d '\r' <"$WORK/headers" | sed -n 's/^[Cc]ontent-[Tt]ype: //p' | tail -1 >"$WORK/content-type"
}
for _ in $(seq 120); do
	curl -sk --max-time 2 "$BASE/healthz" 2>/dev/null | grep -q '^ok$' && break
	kill -0 "${pids[1]}" 2>/dev/null || { tail -20 "$WORK/kube-scheduler.log" >&2; die "kube-scheduler $VERSION exited"; }
	sleep 0.5
done
curl -sk --max-time 2 "$BASE/healthz" | grep -q '^ok$' || die "kube-scheduler $VERSION not healthy after a minute (log: $WORK/kube-scheduler.log)"

step "pods: two that bind, one unschedulable, one gated"
kubectl create namespace record >/dev/null
kubectl apply -f - >/dev/null <<-'YAML'
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: small-1, namespace: record}, spec: {containers: [{name: pause, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 100m}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: small-2, namespace: record}, spec: {containers: [{name: pause, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 100m}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: too-big, namespace: record}, spec: {containers: [{name: pause, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: "8"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: gated, namespace: record}, spec: {schedulingGates: [{name: example.com/hold}], containers: [{name: pause, image: registry.k8s.io/pause:3.10}]}}
YAML
kubectl -n record wait --timeout=60s --for=jsonpath='{.spec.nodeName}' pod/small-1 pod/small-2 >/dev/null
kubectl -n record wait --timeout=60s --for=condition=PodScheduled=false pod/too-big >/dev/null
sleep 2

mkdir -p "$OUT"
step "GET /metrics (scheduler_*, kubernetes_*, leader_election_*, process_* kept)"
get /metrics >"$WORK/metrics.full"
# A family is kept with its HELP and TYPE lines and every sample line.
awk '{ name = ($1 == "#") ? $3 : $1; sub(/\{.*/, "", name) }
	name ~ /^(scheduler_|kubernetes_|leader_election_|process_)/' "$WORK/metrics.full" >"$OUT/metrics.prom"
step "GET /configz"
get /configz >"$OUT/configz.json"
echo "configz $(cat "$WORK/content-type")" >"$WORK/types"
rm -f "$OUT/flagz.txt" "$OUT/flagz.json"
step "GET /flagz (text)"
if get /flagz "text/plain" >"$WORK/flagz.txt"; then
	mv "$WORK/flagz.txt" "$OUT/flagz.txt"
	echo "flagz.txt $(cat "$WORK/content-type")" >>"$WORK/types"
else
	step "no /flagz: $(curl -sk -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$BASE/flagz")"
fi
# Structured flagz: v1beta1 from v1.36, v1alpha1 on v1.35, none on v1.34.
for accept in "application/json;as=Flagz;v=v1beta1;g=config.k8s.io" "application/json;as=Flagz;v=v1alpha1;g=config.k8s.io"; do
	step "GET /flagz (Accept: $accept)"
	if get /flagz "$accept" >"$WORK/flagz.json" 2>"$WORK/flagz.err" &&
		[ "$(jq -r .kind "$WORK/flagz.json" 2>/dev/null)" = Flagz ]; then
		mv "$WORK/flagz.json" "$OUT/flagz.json"
		echo "flagz.json $(cat "$WORK/content-type") ($accept)" >>"$WORK/types"
		break
	fi
	step "not served: $(head -c 200 "$WORK/flagz.err")"
done
cat "$WORK/types" >&2
step "wrote $OUT"
