#!/usr/bin/env bash
# Checks that `go install github.com/kubectl-schedq/kubectl-schedq/cmd/kubectl-schedq@<version>`
# works for this checkout, the way it will for users: outside this repository
# and any go.work, through a module proxy, with replace and exclude directives
# (which go install refuses) absent from the root go.mod. The checkout is
# served at a made-up version from a throwaway file:// proxy; every other
# module comes from the usual proxy. The installed plugin must report that
# version, which is what `kubectl schedq version` shows after go install.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
go=${GO:-go}
mod=github.com/kubectl-schedq/kubectl-schedq
# A fresh version each run: the module cache never holds a stale copy.
version=v0.0.0-installcheck.$(date -u +%Y%m%d%H%M%S).$$

if grep -Eq '^[[:space:]]*(replace|exclude)([[:space:]]|\()' "$root/go.mod"; then
	echo "root go.mod has replace or exclude directives; go install $mod/cmd/kubectl-schedq@<version> refuses them" >&2
	exit 1
fi

tmp=$(mktemp -d)
modcache=$($go env GOMODCACHE)
cleanup() {
	rm -rf "$tmp"
	# Drop this run's copy of the module from the module cache (read-only there).
	local d="$modcache/$mod@$version"
	[ ! -d "$d" ] || { chmod -R u+w "$d"; rm -rf "$d"; }
	rm -f "$modcache/cache/download/$mod/@v/$version".*
}
trap cleanup EXIT
$go run -C "$root/hack/release" . modproxy -root "$root" -version "$version" -out "$tmp/proxy"

upstream=$($go env GOPROXY)
mkdir "$tmp/elsewhere"
(
	cd "$tmp/elsewhere"
	GOWORK=off GOBIN="$tmp/bin" GOPROXY="file://$tmp/proxy,$upstream" GONOSUMDB="$mod" \
		$go install "$mod/cmd/kubectl-schedq@$version"
)
out=$("$tmp/bin/kubectl-schedq" version)
echo "$out"
case "$out" in
*" $version "*) ;;
*) echo "go-installed plugin does not report $version" >&2; exit 1 ;;
esac
