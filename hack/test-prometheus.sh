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
# (perf/flushdemo). A second embedded control plane, with
# SchedulerPopFromBackoffQ off, joins the scrape for the backoffQ runs.
# Checked through Prometheus' HTTP API: every rule evaluates without error,
# every recording rule produces series, and the live runs (each opened by
# live_run, with the alert it fires; mixin/README.md lists them, and
# TestReadmeLiveRuns holds that table to these lines) fire the alert they
# are for, and at every check no other alert is pending or firing on either
# scheduler: gated pods nothing releases, then only waiting; pods backing
# off while activeQ is empty, gate off and on at once; bindings an
# admission policy refuses; a steady run; pods that keep coming after their
# nodes are full, then only waiting; pods no node takes, flushed again and
# again; and pods schedq-flush-demo held back, freed by a node label the
# plugin does not hear, bound right after the flush. And
# `kubectl schedq status --prometheus-url` answers from Prometheus' first
# sample on, saying how much data its rates cover; and status and explain
# reach it through a proxy that wants a bearer token and a tenant, as a
# managed or multi-tenant Prometheus does (hack/tenant-proxy), with
# --prometheus-bearer-token-file, --prometheus-header and
# --prometheus-certificate-authority, and fail without them naming the 401
# or 403 and the flag, never printing the token.
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
CLUSTER_PID= OFF_PID= PROM_PID= PROXY_PID=
cleanup() {
  for pid in "$PROXY_PID" "$PROM_PID" "$CLUSTER_PID" "$OFF_PID"; do [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; done
  for pid in "$PROXY_PID" "$PROM_PID" "$CLUSTER_PID" "$OFF_PID"; do [ -z "$pid" ] || wait "$pid" 2>/dev/null || true; done
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

# await_cluster NAME PID OUT LOG TOKEN: waits for the schedq-perf cluster up
# of pid PID to print its addresses in OUT, then sets CLUSTER_KUBECONFIG,
# CLUSTER_METRICS and CLUSTER_TARGET (the scheduler's host:port) and writes the admin's bearer
# token from the kubeconfig it wrote to TOKEN.
await_cluster() {
  local name=$1 pid=$2 out=$3 log=$4 token=$5
  for _ in $(seq "$TIMEOUT"); do
    grep -q '^queue ' "$out" && break
    kill -0 "$pid" 2>/dev/null || { tail -20 "$log"; fail "$name: schedq-perf cluster up exited"; }
    sleep 1
  done
  grep -q '^queue ' "$out" || fail "$name was not ready in ${TIMEOUT}s"
  CLUSTER_KUBECONFIG=$(sed -n 's/^kubeconfig //p' "$out")
  CLUSTER_METRICS=$(sed -n 's/^metrics //p' "$out")
  CLUSTER_TARGET=${CLUSTER_METRICS#https://}
  CLUSTER_TARGET=${CLUSTER_TARGET%%/*}
  sed -n 's/^ *token: *//p' "$CLUSTER_KUBECONFIG" | head -1 | tr -d '"' >"$token"
  [ -s "$token" ] || fail "no token in $CLUSTER_KUBECONFIG"
}
await_cluster "the control plane" "$CLUSTER_PID" "$WORK/cluster.out" "$WORK/cluster.log" "$WORK/token"
KUBECONFIG_PATH=$CLUSTER_KUBECONFIG METRICS=$CLUSTER_METRICS TARGET=$CLUSTER_TARGET

echo "== a second embedded control plane, SchedulerPopFromBackoffQ off, starting meanwhile"
"$PERF" cluster up --nodes 2 --feature-gates SchedulerPopFromBackoffQ=false \
  >"$WORK/cluster-off.out" 2>"$WORK/cluster-off.log" &
OFF_PID=$!

echo "== alerts scaled to seconds (mixin/tests/live.jsonnet)"
(cd hack/mixin-tools && go tool jsonnet -S -c -m "$WORK/live" ../../mixin/tests/live.jsonnet >/dev/null)

echo "== Prometheus scraping $METRICS"
PORT=$(free_port)
PROM=http://127.0.0.1:$PORT
# prometheus_config [OFF_TARGET]: the scrape of the first control plane's
# scheduler (cluster="embedded") and, given OFF_TARGET, of the second's
# (cluster="embedded-gate-off"), each with its own token, both job="kube-scheduler"
# as the rules select.
prometheus_config() {
  cat <<EOF
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
  [ $# -eq 0 ] || cat <<EOF
  - job_name: kube-scheduler-gate-off
    scheme: https
    authorization:
      credentials_file: $WORK/token-off
    tls_config:
      insecure_skip_verify: true
    static_configs:
      - targets: ['$1']
        labels:
          job: kube-scheduler
          cluster: embedded-gate-off
EOF
}
prometheus_config >"$WORK/prometheus.yml"
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

echo "== status and explain through a proxy that wants a bearer token and a tenant"
proxy_start=$SECONDS
go build -o "$WORK/tenant-proxy" ./hack/tenant-proxy
PROM_TOKEN="schedq-test-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
echo "$PROM_TOKEN" >"$WORK/prom-token"
"$WORK/tenant-proxy" --upstream "$PROM" --token-file "$WORK/prom-token" --tenant team-a --ca-out "$WORK/proxy-ca.crt" \
  >"$WORK/proxy.out" 2>"$WORK/proxy.log" &
PROXY_PID=$!
for _ in $(seq 50); do grep -q '^listening ' "$WORK/proxy.out" && break; sleep 0.1; done
PROXY=$(sed -n 's/^listening //p' "$WORK/proxy.out")
[ -n "$PROXY" ] || { cat "$WORK/proxy.log" >&2; fail "the tenant proxy did not start"; }
creds=(--prometheus-url "$PROXY" --prometheus-certificate-authority "$WORK/proxy-ca.crt"
  --prometheus-bearer-token-file "$WORK/prom-token" --prometheus-header 'X-Scope-OrgID: team-a')
# plugin OUT ARGS...: runs the plugin, its stdout in OUT and stderr in OUT.err,
# and fails when the token is in either.
plugin() {
  local out=$1 rc=0
  shift
  "$PLUGIN" --kubeconfig "$KUBECONFIG_PATH" "$@" >"$out" 2>"$out.err" || rc=$?
  ! grep -qF "$PROM_TOKEN" "$out" "$out.err" || fail "the token was printed by: $*"
  return "$rc"
}
plugin "$WORK/proxied.json" status "${creds[@]}" -o json -v=10 ||
  { cat "$WORK/proxied.json.err" >&2; fail "status through the proxy failed with the token and the tenant"; }
jq -e '.pending.total != null' "$WORK/proxied.json" >/dev/null || fail "status through the proxy printed no queue"
plugin "$WORK/explained.json" explain -A "${creds[@]}" -o json ||
  { cat "$WORK/explained.json.err" >&2; fail "explain through the proxy failed"; }
jq -e '[.warnings[]? | select(test("Prometheus|metrics"))] | length == 0' "$WORK/explained.json" >/dev/null ||
  fail "explain through the proxy did not read the metrics: $(jq -c .warnings "$WORK/explained.json")"
echo "   with the token, the tenant and the proxy's CA: status and explain -A read the scheduler's series"
# refused ARGS... -- WANT...: status with ARGS fails, saying each WANT.
refused() {
  local args=() want
  while [ "$1" != -- ]; do args+=("$1"); shift; done
  shift
  ! plugin "$WORK/refused" status --prometheus-url "$PROXY" --prometheus-certificate-authority "$WORK/proxy-ca.crt" "${args[@]}" ||
    fail "status through the proxy succeeded with ${args[*]:-no credentials}"
  for want in "$@"; do
    grep -qF -- "$want" "$WORK/refused.err" || { cat "$WORK/refused.err" >&2; fail "status with ${args[*]:-no credentials} does not say \"$want\""; }
  done
  echo "   ${args[*]:-no credentials}: $(grep -o '[0-9][0-9][0-9] [A-Z][a-z]*' "$WORK/refused.err" | head -1)"
}
refused -- "401 Unauthorized" "--prometheus-bearer-token-file FILE"
refused --prometheus-bearer-token-file "$WORK/prom-token" -- "401 Unauthorized" '"no org id"' "--prometheus-header 'X-Scope-OrgID: TENANT'"
refused --prometheus-bearer-token-file "$WORK/prom-token" --prometheus-header 'X-Scope-OrgID: team-b' -- "403 Forbidden"
plugin "$WORK/unproxied.json" explain -A --prometheus-url "$PROXY" --prometheus-certificate-authority "$WORK/proxy-ca.crt" -o json ||
  fail "explain without the metrics' credentials failed: it answers without metrics"
jq -e '[.warnings[]? | select(test("401 Unauthorized") and test("--prometheus-bearer-token-file"))] | length == 1' "$WORK/unproxied.json" >/dev/null ||
  fail "explain without the credentials does not say why it has no metrics: $(jq -c .warnings "$WORK/unproxied.json")"
kill "$PROXY_PID" && wait "$PROXY_PID" || true
PROXY_PID=
echo "   the proxy's cases took $((SECONDS - proxy_start))s"

# live_run NAME ALERT: one of the live runs mixin/README.md lists, with the
# alert it fires or none (TestReadmeLiveRuns holds the README's table to
# these lines).
live_run() { echo "== live run \"$1\": fires $2"; }
# alerts_now: the pending and firing alerts, "alertname/cluster state".
alerts_now() { curl -sS --max-time 5 "$PROM/api/v1/alerts" | jq -r '.data.alerts[] | "\(.labels.alertname)/\(.labels.cluster) \(.state)"' | sort -u; }
# only WANT: fails when an alert other than WANT (alertname/cluster; empty
# for none) is pending or firing; prints WANT's state when it is.
only() {
  local alerts others
  alerts=$(alerts_now)
  others=$(grep -v "^$1 " <<<"$alerts" || true)
  [ -z "$others" ] || fail "alerts other than ${1:-none} active: $(tr '\n' ' ' <<<"$others")"
  sed -n "s|^$1 ||p" <<<"$alerts"
}
# fall_quiet: waits until no alert is pending or firing; prints the seconds it took.
fall_quiet() {
  for i in $(seq 0 "$TIMEOUT"); do
    [ -z "$(alerts_now)" ] && { echo "$i"; return 0; }
    sleep 1
  done
  fail "alerts stay active: $(alerts_now | tr '\n' ' ')"
}
# stay_quiet N: fails when any alert is pending or firing in the next N seconds.
stay_quiet() {
  local state
  for _ in $(seq "$1"); do state=$(only ""); sleep 1; done
}

live_run 'gated pods pile up' KubeSchedulerGatedPodsPilingUp
echo "   a gated pod a second, none released"
want=KubeSchedulerGatedPodsPilingUp/embedded
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

live_run 'gated pods wait' none
echo "   they stop coming and wait"
quiet=$(fall_quiet)
echo "   no alert active ${quiet}s after the last gated pod"

kc() { kubectl --kubeconfig "$KUBECONFIG_PATH" "$@"; }
# value EXPR: the value of an instant query that gives one series (0 when none).
value() { curl -sS --max-time 5 -G "$PROM/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // "0"'; }
int() { cut -d. -f1 <<<"$1"; }
# bound NAMESPACE [KUBECTL]: how many of the namespace's pods have a node.
bound() { "${2:-kc}" get pods -n "$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true; }
# pods NAME-PREFIX COUNT CPU [SPEC-LINES]: COUNT pod manifests NAME-PREFIX-1..COUNT requesting CPU.
pods() {
  for n in $(seq 1 "$2"); do
    cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1-$n}
spec:
  ${4:-}
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: $3}}}]
---
EOF
  done
}
# Bound pods have no kubelet to confirm their deletion: delete them at once.
purge() { "$1" delete pods -n "$2" --all --force --grace-period=0 --wait=false >/dev/null 2>>"$WORK/kubectl.log"; }

echo "== the second control plane scraped too"
await_cluster "the second control plane" "$OFF_PID" "$WORK/cluster-off.out" "$WORK/cluster-off.log" "$WORK/token-off"
OFF_KUBECONFIG=$CLUSTER_KUBECONFIG OFF_TARGET=$CLUSTER_TARGET
koff() { kubectl --kubeconfig "$OFF_KUBECONFIG" "$@"; }
prometheus_config "$OFF_TARGET" >"$WORK/prometheus.yml"
kill -HUP "$PROM_PID" # Prometheus reads its configuration again
gate='kubernetes_feature_enabled{job="kube-scheduler",name="SchedulerPopFromBackoffQ"'
for _ in $(seq "$TIMEOUT"); do
  [ "$(query "$gate,cluster=\"embedded-gate-off\"} == 0")" = 1 ] && break
  sleep 1
done
[ "$(query "$gate,cluster=\"embedded-gate-off\"} == 0")" = 1 ] ||
  fail "Prometheus has no SchedulerPopFromBackoffQ=false from the second control plane's scheduler: $(curl -sS --max-time 5 "$PROM/api/v1/targets" | jq -c '[.data.activeTargets[] | {scrapeUrl, health, lastError}]')"
[ "$(query "$gate,cluster=\"embedded\"} == 1")" = 1 ] || fail "the first control plane's scheduler does not say SchedulerPopFromBackoffQ is on"

live_run 'backoffQ waits, gate off' KubeSchedulerBackoffQWaitsWhileActiveQEmpty
live_run 'backoffQ waits, gate on' none
# On both control planes at once: pods no node fits (5 CPU, the nodes have
# 4), which NodeResourcesFit rejects, and a churn pod bound, then deleted,
# again and again: each deletion of a bound pod is an event its queueing
# hint accepts, moving the pods to backoffQ while their backoff (1 s, then
# doubling to 10 s) runs. With the gate off they wait it out while activeQ
# is empty; with it on the scheduler pops them at once, and they fail again.
BLOCKED=10
want=KubeSchedulerBackoffQWaitsWhileActiveQEmpty/embedded-gate-off
pops="sum(scheduler_queue_incoming_pods_total{job=\"kube-scheduler\",cluster=\"embedded\",event=\"PopFromBackoffQ\"})"
pops_before=$(int "$(value "$pops")")
pods blocked "$BLOCKED" 5 >"$WORK/blocked.yaml"
for k in kc koff; do
  "$k" create namespace backoff >/dev/null
  "$k" create namespace churn >/dev/null
  "$k" apply -n backoff -f "$WORK/blocked.yaml" >/dev/null
done
phase_start=$SECONDS
fired=
for i in $(seq 1 "$TIMEOUT"); do
  for k in kc koff; do
    "$k" delete pod -n churn "churn-$((i - 1))-1" --ignore-not-found --force --grace-period=0 --wait=false >/dev/null 2>>"$WORK/kubectl.log"
    pods "churn-$i" 1 10m | "$k" apply -n churn -f - >/dev/null
  done
  state=$(only "$want")
  [ -n "$fired" ] || [ "$state" != firing ] || fired=$((SECONDS - phase_start))
  # Both for at least 20 s, however soon the alert fires.
  [ -z "$fired" ] || [ $((SECONDS - phase_start)) -lt 20 ] || break
  sleep 1
done
[ -n "$fired" ] || fail "$want did not fire in ${TIMEOUT} churns"
popped=$(($(int "$(value "$pops")") - pops_before))
[ "$popped" -gt 0 ] || fail "the gate-on scheduler popped no pod from backoffQ early (PopFromBackoffQ): the churn moved none there"
[ "$(bound backoff kc)" = 0 ] && [ "$(bound backoff koff)" = 0 ] || fail "pods that fit no node were bound"
echo "   gate off: $want firing ${fired}s after the churn began; gate on: quiet, $popped pods popped from backoffQ early ($((SECONDS - phase_start))s, $i churns)"
purge kc backoff
purge kc churn
kill "$OFF_PID" && wait "$OFF_PID" || true
OFF_PID=
quiet=$(fall_quiet)
echo "   the second control plane stopped; no alert active ${quiet}s later"

live_run 'bindings refused' KubeSchedulerErrorBackoffStorm
# A ValidatingAdmissionPolicy refuses every pods/binding in the namespace:
# each attempt passes the scheduling cycle and fails in Bind, an error (no
# plugin rejected the pod), and the pod cycles through the error backoff.
# Six pods only, so that the pods waiting never grow by the ten that
# KubeSchedulerQueueGrowingWhileSchedulingSlows looks for.
STORM=6
want=KubeSchedulerErrorBackoffStorm/embedded
kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: storm, labels: {schedq.example/refuse-bindings: "true"}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: schedq-refuse-bindings}
spec:
  failurePolicy: Fail
  matchConstraints:
    namespaceSelector: {matchLabels: {schedq.example/refuse-bindings: "true"}}
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods/binding]}
  validations:
  - {expression: "false", message: "bindings in this namespace are refused (errors on demand)"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: schedq-refuse-bindings}
spec: {policyName: schedq-refuse-bindings, validationActions: [Deny]}
EOF
sleep 3 # the admission plugin picks the policy up from an informer
pods storm "$STORM" 100m | kc apply -n storm -f - >/dev/null
phase_start=$SECONDS
created=$STORM fired=
for i in $(seq 1 "$TIMEOUT"); do
  # Pods bound before the policy was in force are replaced, twice over at most.
  if [ "$created" -lt $((3 * STORM)) ] && [ $((created - $(bound storm))) -lt "$STORM" ]; then
    created=$((created + 1))
    pods "storm-late-$created" 1 100m | kc apply -n storm -f - >/dev/null
  fi
  state=$(only "$want")
  [ "$state" = firing ] && { fired=$((SECONDS - phase_start)); break; }
  sleep 1
done
[ -n "$fired" ] || fail "$want did not fire"
echo "   $want firing ${fired}s after $STORM pods whose bindings are refused ($((created - STORM)) more for pods bound before the policy held)"
purge kc storm
kc delete validatingadmissionpolicybinding/schedq-refuse-bindings validatingadmissionpolicy/schedq-refuse-bindings >/dev/null
quiet=$(fall_quiet)
echo "   pods deleted; no alert active ${quiet}s later"

live_run 'steady' none
# Two small pods a second for 25 s (the growth window, the rate window and
# the for of the alert on the pending pods), each bound at once.
phase_start=$SECONDS
kc create namespace steady >/dev/null
for i in $(seq 1 "$TIMEOUT"); do
  pods "steady-$i" 2 10m | kc apply -n steady -f - >/dev/null
  state=$(only "")
  [ $((SECONDS - phase_start)) -ge 25 ] && break
  sleep 1
done
created=$((2 * i))
for _ in $(seq 1 10); do [ "$(bound steady)" = "$created" ] && break; sleep 1; done
[ "$(bound steady)" = "$created" ] || fail "$(bound steady) of the $created steady pods bound"
echo "   $created pods bound as they came in $((SECONDS - phase_start))s, no alert"
purge kc steady

live_run 'the cluster fills up' KubeSchedulerQueueGrowingWhileSchedulingSlows
# Two 2-CPU nodes only these pods select; five half-CPU pods about every
# second (more than the ten new pending pods in 10 s the alert looks for
# even when the machine is slow): the first eight are bound at once, then
# the nodes are full and the pods wait, more each second, while the
# scheduler binds none. Should the alert not fire within 25 s of the last
# binding (its rate windows have passed), one more node makes room and the
# nodes fill again.
want=KubeSchedulerQueueGrowingWhileSchedulingSlows/embedded
pool_node() {
  kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata: {name: pool-$1, labels: {schedq.example/pool: full}}
status:
  capacity: {cpu: "2", memory: 8Gi, pods: "110"}
  allocatable: {cpu: "2", memory: 8Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
EOF
}
kc create namespace full >/dev/null
POOL=2
for n in $(seq 1 "$POOL"); do pool_node "$n"; done
phase_start=$SECONDS
fired= last_bound=0 last_bound_at=$SECONDS
for i in $(seq 1 "$TIMEOUT"); do
  pods "full-$i" 5 500m "nodeSelector: {schedq.example/pool: full}" | kc apply -n full -f - >/dev/null
  state=$(only "$want")
  [ "$state" = firing ] && { fired=$((SECONDS - phase_start)); break; }
  b=$(bound full)
  [ "$b" = "$last_bound" ] || { last_bound=$b last_bound_at=$SECONDS; }
  if [ $((SECONDS - last_bound_at)) -ge 25 ]; then
    POOL=$((POOL + 1)) last_bound_at=$SECONDS
    pool_node "$POOL"
  fi
  sleep 1
done
[ -n "$fired" ] || fail "$want did not fire"
echo "   $want firing ${fired}s after pods began to come, $(bound full) bound on $POOL nodes, $(($(kc get pods -n full --no-headers | wc -l) - $(bound full))) waiting"

live_run 'the full cluster waits' none
echo "   the pods stop coming and wait"
quiet=$(fall_quiet)
stay_quiet 10
echo "   no alert active ${quiet}s after the last pod, none in the 10s after"
# The nodes first: deleting the bound pods first would let the waiting ones
# be bound, a burst of bindings that the next run's pending pods, bound
# slower, would compare with.
kc delete nodes -l schedq.example/pool=full >/dev/null
purge kc full

held_bound() { kc get pods -n mixin -l schedq.example/flush-demo -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true; }
flushed='sum(scheduler_queue_incoming_pods_total{job="kube-scheduler",cluster="embedded",event="UnschedulableTimeout", queue=~"active|backoff"})'
after_flush_total='sum(scheduler_pod_scheduled_after_flush_total{job="kube-scheduler",cluster="embedded"})'
# after_flush: pods bound right after the flush since these cases began (a
# coincidence in the runs before must not count here).
after_flush_base=$(int "$(value "$after_flush_total")")
after_flush() { echo $(($(int "$(value "$after_flush_total")") - after_flush_base)); }
phase_start=$SECONDS

live_run 'permanently unschedulable' none
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
  [ "$(after_flush)" = 0 ] || fail "scheduler_pod_scheduled_after_flush_total rose while no flushed pod could be bound"
  if [ "$(value "$flushed" | cut -d. -f1)" -ge "$want_moves" ]; then moved=1; break; fi
  sleep 1
done
[ -n "$moved" ] || fail "the flush did not move the unschedulable pods twice in ${TIMEOUT}s: $(value "$flushed") moves, want $want_moves"
[ "$(held_bound)" = 0 ] || fail "$(held_bound) schedq-flush-demo pods bound while no node has its label"
echo "   $(value "$flushed") pods moved by the flush, none bound after it, no alert ($((SECONDS - phase_start))s)"

live_run 'missed event' KubeSchedulerPodsParkedUntilFlush
echo "   a node gains the label schedq-flush-demo checks, an event it does not hear: its pods wait for the flush"
want=KubeSchedulerPodsParkedUntilFlush/embedded
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
for _ in $(seq 1 10); do [ "$(after_flush)" = "$HELD" ] && break; sleep 1; done
[ "$(after_flush)" = "$HELD" ] ||
  fail "scheduler_pod_scheduled_after_flush_total = $(after_flush), want $HELD: the label's event moved some of the pods"
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
