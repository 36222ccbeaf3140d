#!/usr/bin/env bash
# Keeps .goreleaser.yaml from rotting and its release reproducible:
# `goreleaser check`, then a second snapshot build (nothing published) into
# a temp dir, whose archives and checksums.txt must equal those of the first,
# in dist/ (make snapshot), byte for byte.
# Usage: hack/goreleaser-check.sh TAG   (dist/ must hold TAG's snapshot)
# TOOLS_BIN must hold goreleaser (make goreleaser-tool).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tag=${1:?usage: $0 TAG}
tools=${TOOLS_BIN:-$root/hack/tools/bin}
cd "$root"

"$tools/goreleaser" check

ls dist/kubectl-schedq_"$tag"_* >/dev/null 2>&1 ||
	{ echo "dist/ holds no archive of $tag: make snapshot RELEASE_VERSION=$tag" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Same config, output redirected to the temp dir.
{ cat .goreleaser.yaml; echo; echo "dist: $tmp/again"; } >"$tmp/goreleaser.yaml"
GORELEASER_CURRENT_TAG=$tag "$tools/goreleaser" release --snapshot --clean --skip=publish,announce,sign,sbom \
	--config "$tmp/goreleaser.yaml" --parallelism 2 >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }

cmp dist/checksums.txt "$tmp/again/checksums.txt" || {
	diff dist/checksums.txt "$tmp/again/checksums.txt" >&2
	echo "two snapshot builds of $tag differ: the release is not reproducible" >&2
	exit 1
}
n=0
while read -r _ name; do
	cmp "dist/$name" "$tmp/again/$name"
	n=$((n + 1))
done <dist/checksums.txt
echo "two snapshot builds of $tag: the same $n archives, byte for byte (checksums.txt:)"
sed 's/^/    /' dist/checksums.txt
