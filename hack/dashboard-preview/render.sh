#!/usr/bin/env bash
# Draws the dashboard's panels from a Prometheus in headless Chromium, to a
# PNG: every panel's queries of mixin/rendered/dashboards/schedq-queue.json
# are asked of Prometheus over [START, END] (the variables $cluster and
# $instance set to CLUSTER and INSTANCE, $__rate_interval as Grafana computes
# it for a 1s scrape interval), and page.html lays the answers out as the
# dashboard does: its grid, titles, legends, units, value mappings and no-data
# texts. This is not Grafana (not installable offline); it shows what each
# panel's queries answer, drawn the way the panel asks.
# Usage: hack/dashboard-preview/render.sh PROM_URL CLUSTER INSTANCE START END OUT.png
#   START and END in Unix seconds. Needs chromium (Debian's package), jq, curl;
#   uses pngquant where installed.
set -euo pipefail
[ $# -eq 6 ] || { echo "usage: $0 PROM_URL CLUSTER INSTANCE START END OUT.png" >&2; exit 2; }
PROM=$1 CLUSTER=$2 INSTANCE=$3 START=$4 END=$5 OUT=$6
HERE=$(cd "$(dirname "$0")" && pwd)
DASH=$HERE/../../mixin/rendered/dashboards/schedq-queue.json
command -v chromium >/dev/null || { echo "render.sh: chromium is missing: apt-get install chromium" >&2; exit 1; }
STEP=2
RATE_INTERVAL=4s # max(4 x scrape interval, step + scrape interval), as Grafana's $__rate_interval
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cp "$HERE/page.html" "$WORK/"

# One Prometheus answer per target, in panel order: {panelID: [result, ...]}.
results='{}'
while IFS=$'\t' read -r id instant expr; do
  expr=${expr//\$cluster/$CLUSTER}
  expr=${expr//\$instance/$INSTANCE}
  expr=${expr//\$__rate_interval/$RATE_INTERVAL}
  if [ "$instant" = true ]; then
    answer=$(curl -sS --max-time 10 -G "$PROM/api/v1/query" --data-urlencode "query=$expr" --data-urlencode "time=$END")
  else
    answer=$(curl -sS --max-time 10 -G "$PROM/api/v1/query_range" --data-urlencode "query=$expr" \
      --data-urlencode "start=$START" --data-urlencode "end=$END" --data-urlencode "step=$STEP")
  fi
  [ "$(jq -r .status <<<"$answer")" = success ] || { echo "render.sh: panel $id: $expr: $answer" >&2; exit 1; }
  results=$(jq -c --arg id "$id" --argjson r "$(jq -c .data.result <<<"$answer")" '.[$id] += [$r]' <<<"$results")
done < <(jq -r '.panels[] | .id as $id | .targets[] | [$id, (.instant // false), .expr] | @tsv' "$DASH")

note="drawn from the dashboard's JSON and Prometheus' answers by hack/dashboard-preview (not Grafana) · cluster=$CLUSTER instance=$INSTANCE · $(date -u -d "@$START" +%H:%M:%S)–$(date -u -d "@$END" +%H:%M:%S) UTC"
{
  echo "window.DASH = $(cat "$DASH");"
  echo "window.RESULTS = $results;"
  echo "window.META = $(jq -cn --arg note "$note" --argjson t0 "$START" --argjson t1 "$END" --argjson step "$STEP" \
    '{note: $note, start: $t0, "end": $t1, step: $step}');"
} >"$WORK/data.js"
# The dashboard is 40 grid rows of 30px, with the heading.
timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
  --window-size=1400,1260 --screenshot="$WORK/shot.png" "file://$WORK/page.html" >"$WORK/chromium.log" 2>&1 ||
  { cat "$WORK/chromium.log" >&2; exit 1; }
# pngquant (Debian's package), where installed, makes the PNG about a third.
if command -v pngquant >/dev/null; then
  pngquant --quality 70-90 --speed 1 --force -o "$OUT" "$WORK/shot.png"
else
  mv "$WORK/shot.png" "$OUT"
fi
echo "render.sh: $OUT"
