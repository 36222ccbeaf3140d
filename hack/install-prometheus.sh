#!/usr/bin/env bash
# Debian's prometheus package for the tests that run a real Prometheus
# (make test-prometheus, make test-kind): installed when prometheus is not
# on PATH, never started as a service; the tests start their own.
set -euo pipefail
command -v prometheus >/dev/null && exit 0
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
# Debian's package starts prometheus.service on install; policy-rc.d
# exit 101 forbids that (invoke-rc.d and deb-systemd-invoke both honour it).
policy=/usr/sbin/policy-rc.d ours=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
  "${sudo[@]}" chmod 755 "$policy"
  ours=1
fi
echo "== installing Debian's prometheus package"
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null ||
  { "${sudo[@]}" apt-get update -qq && "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }
[ "$ours" -eq 0 ] || "${sudo[@]}" rm -f "$policy"
command -v prometheus >/dev/null || { echo "install-prometheus: prometheus is not on PATH after apt-get install prometheus" >&2; exit 1; }
