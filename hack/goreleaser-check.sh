#!/usr/bin/env bash
# Keeps .goreleaser.yaml from rotting and its release reproducible:
# `goreleaser check`, then a second snapshot build (nothing published) into
# a temp dir, whose archives and checksums must equal those of the first, in
# dist/ (make snapshot), byte for byte. The second build makes the two
# archive formats only, linux/amd64 (tar.gz) and windows/amd64 (zip): what
# makes an archive differ between builds (file times and modes, the order of
# entries, the compressor, the binary's build ID) is the same for every
# platform of one format, and each platform costs a build.
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
# Same config for the two platforms, output redirected to the temp dir.
goos='    goos: [linux, darwin, windows]'
goarch='    goarch: [amd64, arm64]'
grep -qxF "$goos" .goreleaser.yaml && grep -qxF "$goarch" .goreleaser.yaml ||
	{ echo ".goreleaser.yaml's builds no longer read \"$goos\" and \"$goarch\": update $0" >&2; exit 1; }
{
	awk -v goos="$goos" -v goarch="$goarch" '
		$0 == goos { print "    goos: [linux, windows]"; next }
		$0 == goarch { print "    goarch: [amd64]"; next }
		{ print }' .goreleaser.yaml
	echo
	echo "dist: $tmp/again"
} >"$tmp/goreleaser.yaml"
GORELEASER_CURRENT_TAG=$tag "$tools/goreleaser" release --snapshot --clean --skip=publish,announce,sign,sbom \
	--config "$tmp/goreleaser.yaml" --parallelism 2 >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }

n=0
while read -r sum name; do
	grep -qxF "$sum  $name" dist/checksums.txt || {
		grep -F "$name" dist/checksums.txt >&2 || true
		echo "$sum  $name (second build)" >&2
		echo "two snapshot builds of $tag differ: the release is not reproducible" >&2
		exit 1
	}
	cmp "dist/$name" "$tmp/again/$name"
	n=$((n + 1))
done <"$tmp/again/checksums.txt"
[ "$n" = 2 ] || { echo "the second build made $n archives, want 2 (linux/amd64, windows/amd64)" >&2; exit 1; }
echo "two snapshot builds of $tag: the same linux/amd64 and windows/amd64 archives, byte for byte (checksums.txt of the first:)"
sed 's/^/    /' dist/checksums.txt
