#!/usr/bin/env bash
# A real Prometheus against a real kube-scheduler: Debian's prometheus
# package (installed here when missing, without letting it start as a
# service) scrapes the embedded control plane's scheduler (bin/schedq-perf
# cluster up) every second over HTTPS with the control plane's bearer token,
# with the mixin's recording rules and its alerts loaded, the alerts as
# mixin/tests/live.jsonnet scales them through _config to a run of seconds.
# The scheduler runs with the leftover flush after 10s instead of 5 minutes
# (--pod-max-in-unschedulable-pods-duration) and with schedq-flush-demo
# enabled, a Filter plugin that misses the event freeing the pods it rejects
# (perf/flushdemo). A few pods are created (most bound, two that no node
# takes), then a gated pod a second that nothing releases. Checked through
# Prometheus' HTTP API: every rule evaluates without error, every recording
# rule produces series, the gated pods fire KubeSchedulerGatedPodsPilingUp and
# no other alert is pending or firing, and once they stop coming and only wait
# no alert is active. Then the flush alert: pods no node takes, flushed again
# and again, keep it quiet; pods schedq-flush-demo held back, freed by a node
# label the plugin does not hear, wait for the flush, are bound right after
# it, and fire KubeSchedulerPodsParkedUntilFlush and no other alert. And
# `kubectl schedq status --prometheus-url` answers from Prometheus' first
# sample on, saying how much data its rates cover.
# With SCREENSHOT=FILE.png it then draws the dashboard's panels over the whole
# run into FILE.png (hack/dashboard-preview/render.sh, headless Chromium).
# Usage: hack/test-prometheus.sh   (make test-prometheus builds the binaries)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PERF=${PERF:-bin/schedq-perf}
PLUGIN=${PLUGIN:-bin/kubectl-schedq}
TIMEOUT=${TIMEOUT:-180} # seconds for each wait; the control plane starts slowly on a loaded machine

fail() { echo "test-prometheus: $*" >&2; exit 1; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

hack/install-prometheus.sh
for tool in "$PERF" "$PLUGIN"; do [ -x "$tool" ] || fail "$tool is missing: run make build build-perf"; done
command -v kubectl >/dev/null || fail "kubectl is missing: it creates the test's pods"
command -v jq >/dev/null || fail "jq is missing: it reads Prometheus' API answers"

WORK=$(mktemp -d)
CLUSTER_PID= PROM_PID=
cleanup() {
  [ -z "$PROM_PID" ] || kill "$PROM_PID" 2>/dev/null || true
  [ -z "$CLUSTER_PID" ] || kill "$CLUSTER_PID" 2>/dev/null || true
  [ -z "$PROM_PID" ] || wait "$PROM_PID" 2>/dev/null || true
  [ -z "$CLUSTER_PID" ] || wait "$CLUSTER_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "== embedded control plane: leftover flush after 10s, schedq-flush-demo enabled"
cat >"$WORK/scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      filter:
        enabled:
          - name: schedq-flush-demo
EOF
"$PERF" cluster up --nodes 4 --scheduler-config "$WORK/scheduler.yaml" --pod-max-in-unschedulable-pods-duration 10s \
  >"$WORK/cluster.out" 2>"$WORK/cluster.log" &
CLUSTER_PID=$!
for _ in $(seq "$TIMEOUT"); do
  grep -q '^queue ' "$WORK/cluster.out" && break
  kill -0 "$CLUSTER_PID" 2>/dev/null || { tail -20 "$WORK/cluster.log"; fail "schedq-perf cluster up exited"; }
  sleep 1
done
grep -q '^queue ' "$WORK/cluster.out" || fail "the control plane was not ready in ${TIMEOUT}s"
KUBECONFIG_PATH=$(sed -n 's/^kubeconfig //p' "$WORK/cluster.out")
METRICS=$(sed -n 's/^metrics //p' "$WORK/cluster.out")
TARGET=${METRICS#https://}
TARGET=${TARGET%%/*}
# The admin's bearer token from the kubeconfig cluster up wrote.
sed -n 's/^ *token: *//p' "$KUBECONFIG_PATH" | head -1 | tr -d '"' >"$WORK/token"
[ -s "$WORK/token" ] || fail "no token in $KUBECONFIG_PATH"

echo "== alerts scaled to seconds (mixin/tests/live.jsonnet)"
(cd hack/mixin-tools && go tool jsonnet -S -c -m "$WORK/live" ../../mixin/tests/live.jsonnet >/dev/null)

echo "== Prometheus scraping $METRICS"
PORT=$(free_port)
PROM=http://127.0.0.1:$PORT
cat >"$WORK/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $ROOT/mixin/rendered/prometheus_rules.yaml
  - $WORK/live/prometheus_alerts.yaml
scrape_configs:
  - job_name: kube-scheduler
    scheme: https
    authorization:
      credentials_file: $WORK/token
    # The embedded scheduler's serving certificate is self-signed, as
    # kube-scheduler's is by default.
    tls_config:
      insecure_skip_verify: true
    static_configs:
      - targets: ['$TARGET']
        labels:
          cluster: embedded
EOF
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/data" \
  --web.listen-address="127.0.0.1:$PORT" >"$WORK/prometheus.log" 2>&1 &
PROM_PID=$!

# query EXPR: the number of series Prometheus returns for an instant query.
query() { curl -sS --max-time 5 -G "$PROM/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result | length'; }

for _ in $(seq "$TIMEOUT"); do
  [ "$(query 'up{job="kube-scheduler"} == 1' 2>/dev/null || echo 0)" = 1 ] && break
  kill -0 "$PROM_PID" 2>/dev/null || { tail -20 "$WORK/prometheus.log"; fail "prometheus exited"; }
  sleep 1
done
[ "$(query 'up{job="kube-scheduler"} == 1')" = 1 ] ||
  { curl -sS --max-time 5 "$PROM/api/v1/targets" | jq -c '.data.activeTargets[] | {health, lastError}' >&2; fail "Prometheus could not scrape $METRICS"; }

RUN_START=$(date +%s)

echo "== status --prometheus-url from the first samples"
"$PLUGIN" status --kubeconfig "$KUBECONFIG_PATH" --prometheus-url "$PROM" -o json >"$WORK/status.json" 2>"$WORK/status.err" ||
  { cat "$WORK/status.err" >&2; fail "status --prometheus-url failed with under a minute of data"; }
jq -e '[.warnings[]? | select(test("of data|one sample"))] | length == 1' "$WORK/status.json" >/dev/null ||
  fail "status --prometheus-url did not say how much data it had: $(jq -c '{rateWindow, warnings}' "$WORK/status.json")"
echo "   $(jq -r '[.rateWindow // "no rates", (.warnings[]? | select(test("of data|one sample")))] | join(": ")' "$WORK/status.json")"

echo "== workload"
kubectl --kubeconfig "$KUBECONFIG_PATH" create namespace mixin >/dev/null
for i in $(seq 1 8); do
  cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: small-$i, namespace: mixin}
spec:
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 100m}}}]
---
EOF
done >"$WORK/pods.yaml"
for i in 1 2; do
  cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: nowhere-$i, namespace: mixin}
spec:
  nodeSelector: {schedq.example/none: "true"}
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
---
EOF
done >>"$WORK/pods.yaml"
kubectl --kubeconfig "$KUBECONFIG_PATH" apply -f "$WORK/pods.yaml" >/dev/null

echo "== recording rules"
mapfile -t RECORDS < <(curl -sS --max-time 5 "$PROM/api/v1/rules?type=record" | jq -r '[.data.groups[].rules[].name] | unique | .[]')
[ "${#RECORDS[@]}" -gt 0 ] || fail "Prometheus loaded no recording rules"
missing=("${RECORDS[@]}")
for _ in $(seq "$TIMEOUT"); do
  left=()
  for r in "${missing[@]}"; do
    [ "$(query "$r")" -gt 0 ] || left+=("$r")
  done
  missing=("${left[@]}")
  [ "${#missing[@]}" -eq 0 ] && break
  sleep 1
done
[ "${#missing[@]}" -eq 0 ] || fail "recording rules with no series after ${TIMEOUT}s: ${missing[*]}"
for r in "${RECORDS[@]}"; do echo "   $r: $(query "$r") series"; done

echo "== status --prometheus-url with seconds of data: rates over them"
"$PLUGIN" status --kubeconfig "$KUBECONFIG_PATH" --prometheus-url "$PROM" -o json >"$WORK/status.json" 2>"$WORK/status.err" ||
  { cat "$WORK/status.err" >&2; fail "status --prometheus-url failed"; }
jq -e '(.rateWindow != null) and ([.warnings[]? | select(test("of data"))] | length == 1)' "$WORK/status.json" >/dev/null ||
  fail "status --prometheus-url gave no rates over the data it had: $(jq -c '{rateWindow, warnings}' "$WORK/status.json")"
echo "   $(jq -r '[.rateWindow, (.warnings[]? | select(test("of data")))] | join(": ")' "$WORK/status.json")"

echo "== a gated pod a second, none released: KubeSchedulerGatedPodsPilingUp fires, no other alert"
want=KubeSchedulerGatedPodsPilingUp
alerts_now() { curl -sS --max-time 5 "$PROM/api/v1/alerts" | jq -r '.data.alerts[] | "\(.labels.alertname) \(.state)"' | sort -u; }
fired=
for i in $(seq 1 "$TIMEOUT"); do
  kubectl --kubeconfig "$KUBECONFIG_PATH" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: gated-$i, namespace: mixin}
spec:
  schedulingGates: [{name: schedq.example/quota}]
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
EOF
  alerts=$(alerts_now)
  others=$(grep -v "^$want " <<<"$alerts" || true)
  [ -z "$others" ] || fail "alerts other than $want: $others"
  if grep -q "^$want firing$" <<<"$alerts"; then fired=$i; break; fi
  sleep 1
done
[ -n "$fired" ] || fail "$want did not fire"
echo "   $want firing after $fired gated pods"

echo "== the gated pods stop coming and wait: no alert"
quiet=
for i in $(seq 1 "$TIMEOUT"); do
  [ -z "$(alerts_now)" ] && { quiet=$i; break; }
  sleep 1
done
[ -n "$quiet" ] || fail "alerts stay active while the gated backlog only waits: $(alerts_now)"
echo "   no alert active ${quiet}s after the last gated pod"

kc() { kubectl --kubeconfig "$KUBECONFIG_PATH" "$@"; }
# value EXPR: the value of an instant query that gives one series (0 when none).
value() { curl -sS --max-time 5 -G "$PROM/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // "0"'; }
held_bound() { kc get pods -n mixin -l schedq.example/flush-demo -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true; }
flushed='sum(scheduler_queue_incoming_pods_total{job="kube-scheduler",event="UnschedulableTimeout", queue=~"active|backoff"})'
after_flush='sum(scheduler_pod_scheduled_after_flush_total{job="kube-scheduler"})'
phase_start=$SECONDS

echo "== pods no node takes, flushed again and again: no alert"
# Ten more with a nodeSelector no node has, created together, beside the two
# created minutes before; and five that schedq-flush-demo rejects while no
# node has its label. The flush moves each of them every 10-40 s, and each
# fails again. And four the scheduler binds at once, which the flush never
# touches.
for i in $(seq 1 10); do
  cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: nowhere-batch-$i, namespace: mixin}
spec:
  nodeSelector: {schedq.example/none: "true"}
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
---
EOF
done >"$WORK/flush-pods.yaml"
HELD=5
for i in $(seq 1 "$HELD"); do
  cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: held-$i, namespace: mixin, labels: {schedq.example/flush-demo: "yes"}}
spec:
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 100m}}}]
---
EOF
done >>"$WORK/flush-pods.yaml"
for i in 1 2 3 4; do
  cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: small-late-$i, namespace: mixin}
spec:
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 100m}}}]
---
EOF
done >>"$WORK/flush-pods.yaml"
kc apply -f "$WORK/flush-pods.yaml" >/dev/null
# Two flushes of each of these 15 pods and of the 2 older ones (to activeQ or
# backoffQ; gated pods the flush moves go back to unschedulablePods).
want_moves=$(($(value "$flushed" | cut -d. -f1) + 2 * (10 + HELD + 2)))
moved=
for _ in $(seq 1 "$TIMEOUT"); do
  alerts=$(alerts_now)
  [ -z "$alerts" ] || fail "alerts while pods no node takes are flushed: $alerts"
  [ "$(value "$after_flush")" = 0 ] || fail "scheduler_pod_scheduled_after_flush_total rose while no flushed pod could be bound"
  if [ "$(value "$flushed" | cut -d. -f1)" -ge "$want_moves" ]; then moved=1; break; fi
  sleep 1
done
[ -n "$moved" ] || fail "the flush did not move the unschedulable pods twice in ${TIMEOUT}s: $(value "$flushed") moves, want $want_moves"
[ "$(held_bound)" = 0 ] || fail "$(held_bound) schedq-flush-demo pods bound while no node has its label"
echo "   $(value "$flushed") pods moved by the flush, none bound after it, no alert ($((SECONDS - phase_start))s)"

echo "== a node gains the label schedq-flush-demo checks, an event it does not hear: its pods wait for the flush"
want=KubeSchedulerPodsParkedUntilFlush
labelled=$SECONDS
kc label node/"$(kc get nodes -o jsonpath='{.items[0].metadata.name}')" schedq.example/flush-demo-ready=true >/dev/null
bound_after=
for _ in $(seq 1 "$TIMEOUT"); do
  [ "$(held_bound)" = "$HELD" ] && { bound_after=$((SECONDS - labelled)); break; }
  sleep 1
done
[ -n "$bound_after" ] || fail "the schedq-flush-demo pods were not bound in ${TIMEOUT}s after a node gained its label"
# Each bound in the attempt right after the flush moved it, none moved by the
# label's event.
for _ in $(seq 1 10); do [ "$(value "$after_flush")" = "$HELD" ] && break; sleep 1; done
[ "$(value "$after_flush")" = "$HELD" ] ||
  fail "scheduler_pod_scheduled_after_flush_total = $(value "$after_flush"), want $HELD: the label's event moved some of the pods"
echo "   $HELD pods bound ${bound_after}s after the label, each right after the flush"
fired= pending=
for i in $(seq 1 "$TIMEOUT"); do
  alerts=$(alerts_now)
  others=$(grep -v "^$want " <<<"$alerts" || true)
  [ -z "$others" ] || fail "alerts other than $want: $others"
  grep -q "^$want pending$" <<<"$alerts" && pending=1
  if grep -q "^$want firing$" <<<"$alerts"; then fired=$i; break; fi
  sleep 1
done
[ -n "$fired" ] || fail "$want did not fire"
echo "   $want ${pending:+pending, then }firing ${fired}s after the pods were bound"
echo "   the flush alert's cases took $((SECONDS - phase_start))s"

echo "== every rule healthy"
bad=$(curl -sS --max-time 5 "$PROM/api/v1/rules" | jq -r '.data.groups[].rules[] | select(.health != "ok") | "\(.name): \(.health) \(.lastError // "")"')
[ -z "$bad" ] || fail "rules that do not evaluate: $bad"
groups=$(curl -sS --max-time 5 "$PROM/api/v1/rules" | jq -r '[.data.groups[].name] | join(", ")')
echo "   groups: $groups"

if [ -n "${SCREENSHOT:-}" ]; then
  echo "== the dashboard's panels over the run"
  sleep 5 # the alert's last samples
  hack/dashboard-preview/render.sh "$PROM" embedded "$TARGET" "$RUN_START" "$(date +%s)" "$SCREENSHOT"
fi
echo "test-prometheus: ok"
