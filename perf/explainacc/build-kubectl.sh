#!/bin/sh
# Builds kubectl (k8s.io/kubernetes/cmd/kubectl, at the version perf/go.mod
# requires) into $1, for TestExplainSpeed to compare explain with. kubectl's own dependencies are
# not in perf/go.mod, so it is built in a throwaway module that takes
# perf/go.mod's replace directives; neither module's go.mod changes. Needs
# the module proxy for the few modules kubectl adds.
set -eu
out=${1:?usage: build-kubectl.sh OUTPUT}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
perf=$(cd "$(dirname "$0")/.." && pwd)
version=$(awk '$1 == "k8s.io/kubernetes" { print $2 }' "$perf/go.mod")
test -n "$version" || { echo "build-kubectl.sh: $perf/go.mod requires no k8s.io/kubernetes" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
{
	printf 'module kubectlbuild\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes %s\n\n' "$version"
	sed -n '/^replace (/,/^)/p' "$perf/go.mod"
} >"$dir/go.mod"
printf '//go:build tools\n\npackage tools\n\nimport _ "k8s.io/kubernetes/cmd/kubectl"\n' >"$dir/tools.go"
cd "$dir"
GOFLAGS=-mod=mod ${GO:-go} build -trimpath -ldflags "-X k8s.io/component-base/version.gitVersion=$version" -o "$out" k8s.io/kubernetes/cmd/kubectl
echo "built $out"
