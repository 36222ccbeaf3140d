#!/usr/bin/env bash
# Keeps .goreleaser.yaml from rotting and from drifting away from `make dist`:
# `goreleaser check`, then a snapshot release (nothing published) into a temp
# dir, and the same version built by hack/release; the two must produce the
# same archive names holding the same files, modes and bytes.
# TOOLS_BIN must hold goreleaser (make goreleaser-check installs it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
go=${GO:-go}
tools=${TOOLS_BIN:-$root/hack/tools/bin}
cd "$root"

"$tools/goreleaser" check

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Same config, output redirected to the temp dir.
{ cat .goreleaser.yaml; echo; echo "dist: $tmp/goreleaser"; } >"$tmp/goreleaser.yaml"
"$tools/goreleaser" release --snapshot --clean --skip=publish,announce,sign,sbom \
	--config "$tmp/goreleaser.yaml" --parallelism 2 >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
tail -n 3 "$tmp/log"

# The tag goreleaser stamped (the latest tag, v0.0.0 without one).
tag=$(sed -n 's/.*"tag":"\([^"]*\)".*/\1/p' "$tmp/goreleaser/metadata.json")
[ -n "$tag" ] || { echo "no tag in goreleaser's metadata.json" >&2; exit 1; }
$go run -C hack/release . dist -root "$root" -out "$tmp/dist" -version "$tag" \
	-ldflags "-s -w -X github.com/kubectl-schedq/kubectl-schedq/pkg/cmd.version=$tag" >/dev/null
$go run -C hack/release . compare -version "$tag" "$tmp/dist" "$tmp/goreleaser"
cmp <(cd "$tmp/dist" && sed 's/^[0-9a-f]*  //' checksums.txt) \
	<(cd "$tmp/goreleaser" && sed 's/^[0-9a-f]*  //' checksums.txt) ||
	{ echo "checksums.txt lists different files" >&2; exit 1; }
