#!/usr/bin/env bash
# Checks the krew manifest against goreleaser's archives in dist/
# (make snapshot):
#   1. renders .krew.yaml (the krew-release-bot template) with the bot's own
#      code against dist/'s archives (hack/release krew-manifest);
#   2. runs krew's own validator on it and on the committed krew/schedq.yaml
#      (-skip-install: the URIs point at a GitHub release that does not
#      exist yet);
#   3. installs every platform's archive with krew itself (--archive, so
#      offline), which checks each sha256, the files and bin entries and the
#      LICENSE, then runs the installed plugin for this machine's platform.
# Usage: hack/krew-validate.sh TAG   (dist/ must hold TAG's archives)
# TOOLS_BIN must hold validate-krew-manifest and krew (make krew-tools).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
go=${GO:-go}
version=${1:?usage: $0 TAG}
tools=${TOOLS_BIN:-$root/hack/tools/bin}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

$go run -C "$root/hack/release" . krew-manifest -template "$root/.krew.yaml" -dist "$root/dist" \
	-tag "$version" >"$tmp/schedq.yaml"

for m in "$tmp/schedq.yaml" "$root/krew/schedq.yaml"; do
	echo "validate-krew-manifest -manifest ${m#"$root/"} -skip-install"
	"$tools/validate-krew-manifest" -manifest "$m" -skip-install 2>&1 | sed 's/^/    /' # pipefail
done

host="$($go env GOOS)_$($go env GOARCH)"
n=0
for archive in "$root"/dist/kubectl-schedq_"$version"_*; do
	name=$(basename "$archive")
	platform=${name#kubectl-schedq_"$version"_}
	platform=${platform%.tar.gz}
	platform=${platform%.zip}
	os=${platform%_*} arch=${platform#*_}
	kroot="$tmp/krew-$platform"
	if ! KREW_ROOT="$kroot" KREW_OS="$os" KREW_ARCH="$arch" \
		"$tools/krew" install --manifest="$tmp/schedq.yaml" --archive="$archive" </dev/null >"$tmp/log" 2>&1; then
		cat "$tmp/log" >&2
		echo "krew could not install $name for $os/$arch" >&2
		exit 1
	fi
	bin="$kroot/bin/kubectl-schedq"
	[ "$os" != windows ] || bin="$bin.exe"
	test -e "$bin" || { echo "krew installed $name but $bin is missing" >&2; exit 1; }
	comp="$kroot/store/schedq/$version/kubectl_complete-schedq"
	[ "$os" != windows ] || comp="$comp.cmd"
	ls "$kroot/store/schedq/$version/LICENSE" "$comp" >/dev/null
	if [ "$platform" = "$host" ]; then
		out=$("$bin" version)
		case "$out" in
		*" $version "*) echo "krew-installed plugin: $out" ;;
		*) echo "krew-installed plugin reports '$out', want $version" >&2; exit 1 ;;
		esac
	fi
	n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "no archives of $version in dist/ (make snapshot RELEASE_VERSION=$version)" >&2; exit 1; }
echo "krew installed all $n platforms from dist/"
