#!/usr/bin/env bash
# Builds the load-balancer image kind runs in front of several control-plane
# nodes, offline: kind pulls its Envoy image (the tag is a constant of the
# kind module, read here from the module cache), which no registry here
# serves. The image is the kind node image (its bash and coreutils, which
# kind's commands in the container use; it shares all its layers) plus
# kind-lb installed as `envoy`, which reads the configuration kind writes for
# Envoy. Skips the build when the image carries the hash of its inputs; the
# last line of output is the image name.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
HERE=$ROOT/e2e/infra/kind-lb
GO=${GO:-go}
NODE_IMAGE=${KIND_NODE_IMAGE:?KIND_NODE_IMAGE names the node image this one is built on}
KIND_MODULE=sigs.k8s.io/kind@$(awk '$1 == "sigs.k8s.io/kind" { print $2 }' "$ROOT/go.mod")
LABEL=io.schedq.kind-lb.inputs
start=$(date +%s)
step() { echo "[kind-lb $(($(date +%s) - start))s] $*"; }
die() { echo "kind-lb: $*" >&2; exit 1; }

kind_dir=$(cd "$ROOT" && "$GO" mod download -json "$KIND_MODULE" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
const=$kind_dir/pkg/cluster/internal/loadbalancer/const.go
[ -f "$const" ] || die "no $const: kind's load balancer moved"
IMAGE=$(sed -n 's/^const Image = "\(.*\)"$/\1/p' "$const")
case $IMAGE in
*envoy*) ;;
*) die "$KIND_MODULE's load-balancer image is $IMAGE, not Envoy: kind-lb reads Envoy's configuration only" ;;
esac

node_id=$(docker image inspect -f '{{.Id}}' "$NODE_IMAGE" 2>/dev/null) || die "no node image $NODE_IMAGE (make kind-node-image)"
inputs=$(cat "$HERE"/build.sh "$HERE"/*.go "$ROOT"/go.sum <(echo "$node_id $IMAGE $("$GO" env GOVERSION)") | sha256sum | cut -c1-16)
if [ "$(docker image inspect -f "{{index .Config.Labels \"$LABEL\"}}" "$IMAGE" 2>/dev/null || true)" = "$inputs" ]; then
	step "up to date (inputs $inputs)"
	echo "$IMAGE"
	exit 0
fi
step "building $IMAGE on $NODE_IMAGE (inputs $inputs)"
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
(cd "$ROOT" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags '-s -w' -o "$ctx/envoy" ./e2e/infra/kind-lb)
cat >"$ctx/Dockerfile" <<EOF
FROM $NODE_IMAGE
COPY envoy /usr/local/bin/envoy
LABEL $LABEL=$inputs
ENTRYPOINT []
CMD ["envoy", "-c", "/home/envoy/envoy.yaml"]
EOF
old=$(docker image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)
docker build -q -t "$IMAGE" "$ctx" >/dev/null 2>"$ctx/build.log" || { cat "$ctx/build.log" >&2; exit 1; }
[ -n "$old" ] && [ "$old" != "$(docker image inspect -f '{{.Id}}' "$IMAGE")" ] && docker rmi "$old" >/dev/null 2>&1 || true
step "built $IMAGE"
echo "$IMAGE"
