#!/usr/bin/env bash
# Builds the kind node image offline: a Debian bookworm root filesystem from
# Debian's packages, kind's own base-image files (read from the module cache
# of sigs.k8s.io/kind at build time, never committed), Kubernetes binaries
# built from Go modules, and every image kubeadm and kind need, built here and
# loaded into containerd's k8s.io namespace so that nothing is pulled.
#
# Skips the build when the image carries the hash of its inputs. Prints step
# lines with elapsed seconds; the last line of output is the image name.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
HERE=$ROOT/e2e/infra/kind-node
OUT=$HERE/.build  # generated build inputs (gitignored)
CACHE=$OUT/cache  # kept between builds: rootfs tarball, binaries
GO=${GO:-go}
# A go.work above the repository must not take over the generated modules.
export GOWORK=off
# The default is the version perf/ builds, so that the node image and perf/
# compile the same packages (and CI compiles them once).
PERF_KUBE_VERSION=$(awk '$1 == "k8s.io/kubernetes" { print $2 }' "$ROOT/perf/go.mod")
KUBE_VERSION=${KUBE_VERSION:-$PERF_KUBE_VERSION}
IMAGE=${KIND_NODE_IMAGE:-schedq.local/kind-node:$KUBE_VERSION}
# kind's base-image files come from the kind the plugin links.
KIND_MODULE=sigs.k8s.io/kind@$(awk '$1 == "sigs.k8s.io/kind" { print $2 }' "$ROOT/go.mod")

step() { echo "[kind-node $(($(date +%s) - start))s] $*"; }
die() { echo "kind-node: $*" >&2; exit 1; }
hash() { sha256sum | cut -c1-16; }
start=$(date +%s)

# The images kubeadm of each version deploys (kubeadm config images list):
# etcd, CoreDNS, pause. Checked below against the built kubeadm, so a row
# cannot drift silently. A new version is a new row.
case $KUBE_VERSION in
v1.34.4) ETCD_TAG=3.6.5-0 COREDNS_TAG=v1.12.1 PAUSE_TAG=3.10.1 ;;
v1.35.4) ETCD_TAG=3.6.6-0 COREDNS_TAG=v1.13.1 PAUSE_TAG=3.10.1 ;;
v1.36.3) ETCD_TAG=3.6.8-0 COREDNS_TAG=v1.14.2 PAUSE_TAG=3.10.2 ;;
v1.37.2) ETCD_TAG=3.7.0-0 COREDNS_TAG=v1.14.6 PAUSE_TAG=3.10.2 ;;
*) die "KUBE_VERSION=$KUBE_VERSION: no row for it in e2e/infra/kind-node/build.sh (v1.34.4, v1.35.4, v1.36.3, v1.37.2 have one; add the images of \`kubeadm config images list --kubernetes-version $KUBE_VERSION\`)" ;;
esac
# The CoreDNS plugins kubeadm's Corefile names (prometheus is plugin/metrics).
COREDNS_PLUGINS="cache errors forward health kubernetes loadbalance loop metrics ready reload"
KUBE_MINOR=${KUBE_VERSION#v1.}
KUBE_MINOR=${KUBE_MINOR%%.*}
SUITE=bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
PACKAGES=jq,systemd,systemd-sysv,dbus,iproute2,iptables,kmod,mount,util-linux,containerd,runc,conntrack,ethtool,socat,ca-certificates,containernetworking-plugins,libseccomp2,procps,e2fsprogs,bash
LABEL=io.schedq.kind-node.inputs

# One build at a time: two would share the build directories.
mkdir -p "$OUT"
exec 9>"$OUT/lock"
flock -w 1800 9 || die "another build holds $OUT/lock"

command -v docker >/dev/null && timeout 20 docker info >/dev/null 2>&1 ||
	die "no Docker engine answers (e2e/infra/docker-engine.sh up starts one)"

# Every input that changes the image. The Go modules the binaries are built
# from are generated from these (perf/go.mod for perf/'s version); Go's own
# version builds the binaries.
perf_mod=
[ "$KUBE_VERSION" = "$PERF_KUBE_VERSION" ] && perf_mod=$(cat "$ROOT"/perf/go.{mod,sum})
inputs=$({
	cat "$HERE/build.sh" "$HERE"/files/*
	echo "$perf_mod"
	echo "$KUBE_VERSION $KIND_MODULE $PACKAGES $SUITE $("$GO" env GOVERSION)"
} | hash)
if [ "$(docker image inspect -f "{{index .Config.Labels \"$LABEL\"}}" "$IMAGE" 2>/dev/null || true)" = "$inputs" ]; then
	step "up to date (inputs $inputs)"
	echo "$IMAGE"
	exit 0
fi
step "building $IMAGE: Kubernetes $KUBE_VERSION, etcd $ETCD_TAG, CoreDNS $COREDNS_TAG, pause $PAUSE_TAG, kind $KIND_MODULE (inputs $inputs)"
mkdir -p "$CACHE" "$OUT/logs"

# The Go modules the binaries are built from, generated for this version
# into $OUT/mod/$KUBE_VERSION: nothing per version is written by hand.
MOD=$OUT/mod/$KUBE_VERSION
rm -rf "$MOD" && mkdir -p "$MOD"/{k8s,etcd,coredns}
# tools MODDIR PKG...: a tools.go that imports the commands to build.
tools() {
	local dir=$1
	shift
	{
		echo '//go:build tools'
		echo
		echo '// Package tools pins the commands the kind node image carries.'
		echo 'package tools'
		echo
		echo 'import ('
		for p in "$@"; do echo "	_ \"$p\""; done
		echo ')'
	} >"$dir/tools.go"
}
step "Go modules for $KUBE_VERSION (into $MOD)"
K8S_CMDS=(kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubeadm kubectl kubelet)
(
	cd "$MOD/k8s"
	if [ -n "$perf_mod" ]; then
		# perf/'s own module graph, so that every package is the one
		# perf/ compiles (one build in the cache for both).
		cp "$ROOT"/perf/go.{mod,sum} .
		self=github.com/kubectl-schedq/kubectl-schedq
		"$GO" mod edit -module "$self/e2e/infra/kind-node/k8s" -droprequire "$self" -dropreplace "$self"
	else
		"$GO" mod init github.com/kubectl-schedq/kubectl-schedq/e2e/infra/kind-node/k8s >/dev/null 2>&1
		# k8s.io/kubernetes requires its staging modules at v0.0.0 and
		# replaces them with ./staging paths that a consumer cannot see:
		# pin each at the matching v0.x.y.
		kdir=$("$GO" mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
		[ -f "$kdir/go.mod" ] || die "k8s.io/kubernetes@$KUBE_VERSION: not in the module cache or proxy"
		edits=(-require "k8s.io/kubernetes@$KUBE_VERSION")
		for m in $(awk '$2 == "=>" && $3 ~ /^\.\/staging\// { print $1 }' "$kdir/go.mod"); do
			edits+=(-replace "$m=$m@v0.${KUBE_VERSION#v1.}")
		done
		"$GO" mod edit "${edits[@]}"
	fi
	tools . $(printf 'k8s.io/kubernetes/cmd/%s ' "${K8S_CMDS[@]}") go.etcd.io/etcd/server/v3/etcdmain
	"$GO" mod tidy
) >"$OUT/logs/mod-k8s.log" 2>&1 || { tail -20 "$OUT/logs/mod-k8s.log" >&2; die "generating the k8s module failed"; }
# etcd at kubeadm's tag: from the k8s module when that selects it (so it is
# perf/'s etcd for perf/'s version), else from a module of its own, which
# leaves the Kubernetes binaries on the etcd client their release chose.
ETCD_MOD=$MOD/k8s
if [ "$(cd "$MOD/k8s" && "$GO" list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)" != "v${ETCD_TAG%-*}" ]; then
	ETCD_MOD=$MOD/etcd
	(
		cd "$ETCD_MOD"
		"$GO" mod init github.com/kubectl-schedq/kubectl-schedq/e2e/infra/kind-node/etcd
		"$GO" mod edit -require "go.etcd.io/etcd/server/v3@v${ETCD_TAG%-*}"
		tools . go.etcd.io/etcd/server/v3/etcdmain
		"$GO" mod tidy
	) >"$OUT/logs/mod-etcd.log" 2>&1 || { tail -20 "$OUT/logs/mod-etcd.log" >&2; die "generating the etcd module failed"; }
fi
# CoreDNS with the plugins of the Corefile kubeadm deploys (its
# CoreDNSConfigMap: errors, health, ready, kubernetes, prometheus, forward,
# cache, loop, reload, loadbalance), as CoreDNS's own main with a shorter
# plugin.cfg would build it: the same server and plugin code, without the
# cloud providers' SDKs of the other plugins, which are most of what a full
# build compiles (docs/development.md, CI).
(
	cd "$MOD/coredns"
	"$GO" mod init github.com/kubectl-schedq/kubectl-schedq/e2e/infra/kind-node/coredns
	"$GO" mod edit -require "github.com/coredns/coredns@$COREDNS_TAG"
	{
		echo '// Command coredns is CoreDNS with the plugins of kubeadm'"'"'s Corefile.'
		echo 'package main'
		echo
		echo 'import ('
		echo '	"github.com/coredns/coredns/coremain"'
		echo
		for p in $COREDNS_PLUGINS; do echo "	_ \"github.com/coredns/coredns/plugin/$p\""; done
		echo ')'
		echo
		echo 'func main() { coremain.Run() }'
	} >main.go
	"$GO" mod tidy
) >"$OUT/logs/mod-coredns.log" 2>&1 || { tail -20 "$OUT/logs/mod-coredns.log" >&2; die "generating the coredns module failed"; }

step "kind $KIND_MODULE from the module cache"
KIND_DIR=$(cd "$MOD/k8s" && "$GO" mod download -json "$KIND_MODULE" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
[ -d "$KIND_DIR/images/base/files" ] || die "no kind base files in $KIND_DIR"
KUBE_DIR=$(cd "$MOD/k8s" && "$GO" list -m -f '{{.Dir}}' k8s.io/kubernetes)

# Each job writes to a cache path keyed by its own inputs, so a warm rebuild
# skips it. Jobs run in parallel: debootstrap is network and disk, the Go
# builds share the two cores.
rootfs_key=$(echo "$SUITE $PACKAGES" | hash)
ROOTFS_TAR=$CACHE/rootfs-$rootfs_key.tar
BASE=schedq.local/kind-node-base:$rootfs_key
kv=k8s.io/component-base/version
KUBE_LDFLAGS="-s -w -X $kv.gitVersion=$KUBE_VERSION -X $kv.gitMajor=1 -X $kv.gitMinor=$KUBE_MINOR -X $kv.gitTreeState=clean -X $kv.buildDate=1970-01-01T00:00:00Z"
k8s_key=$(cat "$MOD"/k8s/go.{mod,sum} <(echo "$KUBE_LDFLAGS $("$GO" env GOVERSION)") | hash)
K8S_BIN=$CACHE/k8s-$KUBE_VERSION-$k8s_key
etcd_key=$(cat "$ETCD_MOD"/go.{mod,sum} <(echo "etcd $("$GO" env GOVERSION)") | hash)
ETCD_BIN=$CACHE/etcd-$ETCD_TAG-$etcd_key
coredns_key=$(cat "$MOD"/coredns/{go.mod,go.sum,main.go} <(echo "$("$GO" env GOVERSION)") | hash)
COREDNS_BIN=$CACHE/coredns-$COREDNS_TAG-$coredns_key
PAUSE_BIN=$CACHE/pause-$PAUSE_TAG

job_rootfs() {
	{ [ -f "$ROOTFS_TAR" ] || docker image inspect "$BASE" >/dev/null 2>&1; } && return
	command -v debootstrap >/dev/null || {
		DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq debootstrap >/dev/null 2>&1 ||
			{ timeout 600 apt-get update -qq && DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq debootstrap; }
	}
	local dir=$OUT/rootfs.tmp
	rm -rf "$dir"
	timeout 1200 debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$dir" "$MIRROR"
	rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
	tar -C "$dir" --numeric-owner -cf "$ROOTFS_TAR.tmp" .
	mv "$ROOTFS_TAR.tmp" "$ROOTFS_TAR"
	rm -rf "$dir"
}

job_k8s() {
	[ -x "$K8S_BIN/kubelet" ] && return
	mkdir -p "$K8S_BIN.tmp"
	(cd "$MOD/k8s" && CGO_ENABLED=0 "$GO" build -trimpath -o "$K8S_BIN.tmp/" -ldflags "$KUBE_LDFLAGS" \
		k8s.io/kubernetes/cmd/{kube-apiserver,kube-controller-manager,kube-scheduler,kube-proxy,kubeadm,kubectl,kubelet})
	rm -rf "$K8S_BIN" && mv "$K8S_BIN.tmp" "$K8S_BIN"
}

job_etcd() {
	[ -x "$ETCD_BIN" ] && return
	(cd "$ETCD_MOD" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags '-s -w' -o "$ETCD_BIN.tmp" go.etcd.io/etcd/server/v3)
	mv "$ETCD_BIN.tmp" "$ETCD_BIN"
}

job_coredns() {
	[ -x "$COREDNS_BIN" ] && return
	(cd "$MOD/coredns" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags '-s -w' -o "$COREDNS_BIN.tmp" .)
	mv "$COREDNS_BIN.tmp" "$COREDNS_BIN"
}

job_pause() {
	[ -x "$PAUSE_BIN" ] && return
	command -v gcc >/dev/null || die "gcc is needed for the pause image"
	gcc -Os -Wall -Werror -static -DVERSION="v$PAUSE_TAG" -o "$PAUSE_BIN.tmp" "$KUBE_DIR/build/pause/linux/pause.c"
	strip "$PAUSE_BIN.tmp"
	mv "$PAUSE_BIN.tmp" "$PAUSE_BIN"
}

pids=()
for j in rootfs k8s etcd coredns pause; do
	step "start $j (log: $OUT/logs/$j.log)"
	"job_$j" >"$OUT/logs/$j.log" 2>&1 &
	pids+=("$j:$!")
done
failed=0
for p in "${pids[@]}"; do
	if wait "${p#*:}"; then
		step "done ${p%%:*}"
	else
		echo "--- ${p%%:*} failed; last lines of its log:" >&2
		tail -30 "$OUT/logs/${p%%:*}.log" >&2
		failed=1
	fi
done
[ "$failed" = 0 ] || die "a build job failed"
# Drop cache entries of this version's earlier inputs (each set of binaries
# is ~0.5 GB); other versions' stay.
for f in "$CACHE"/rootfs-* "$CACHE/k8s-$KUBE_VERSION-"* "$CACHE/etcd-$ETCD_TAG-"* "$CACHE/coredns-$COREDNS_TAG-"*; do
	case $f in "$ROOTFS_TAR" | "$K8S_BIN" | "$ETCD_BIN" | "$COREDNS_BIN") ;; *) rm -rf "$f" ;; esac
done

# Read whole before matching: grep -q or head would close the pipe early,
# and pipefail would count etcd's broken pipe as a failure.
etcd_version=$("$ETCD_BIN" --version)
grep -qx "etcd Version: ${ETCD_TAG%-*}" <<<"$etcd_version" ||
	die "the etcd built is not $ETCD_TAG: ${etcd_version%%$'\n'*}"
want=$("$K8S_BIN/kubeadm" config images list --kubernetes-version "$KUBE_VERSION" 2>/dev/null)
for img in etcd:$ETCD_TAG coredns/coredns:$COREDNS_TAG pause:$PAUSE_TAG; do
	grep -qx "registry.k8s.io/$img" <<<"$want" || die "kubeadm $KUBE_VERSION expects other images than this build makes:"$'\n'"$want"
done

# The root filesystem as an image, keyed like its tarball.
if ! docker image inspect "$BASE" >/dev/null 2>&1; then
	step "import root filesystem as $BASE"
	docker import "$ROOTFS_TAR" "$BASE" >/dev/null
fi

IMGS=$OUT/images
rm -rf "$IMGS" && mkdir -p "$IMGS"

# scratch_image NAME TAG BINARY PATH-IN-IMAGE: one static binary, nothing else.
scratch_image() {
	local name=$1 tag=$2 bin=$3 path=$4 ctx=$OUT/ctx/$1
	rm -rf "$ctx" && mkdir -p "$ctx"
	cp "$bin" "$ctx/bin"
	printf 'FROM scratch\nCOPY bin %s\nENV PATH=/usr/local/bin:/usr/bin:/bin\nENTRYPOINT ["%s"]\n' "$path" "$path" >"$ctx/Dockerfile"
	docker build -q -t "registry.k8s.io/$name:$tag" "$ctx" >/dev/null 2>"$OUT/logs/build-${name//\//_}.log" || { cat "$OUT/logs/build-${name//\//_}.log" >&2; exit 1; }
	docker save -o "$IMGS/${name//\//_}.tar" "registry.k8s.io/$name:$tag"
}

step "component images (FROM scratch)"
for c in kube-apiserver kube-controller-manager kube-scheduler; do
	scratch_image "$c" "$KUBE_VERSION" "$K8S_BIN/$c" "/usr/local/bin/$c"
done
scratch_image etcd "$ETCD_TAG" "$ETCD_BIN" /usr/local/bin/etcd
scratch_image coredns/coredns "$COREDNS_TAG" "$COREDNS_BIN" /coredns
scratch_image pause "$PAUSE_TAG" "$PAUSE_BIN" /pause

# kube-proxy programs iptables, so its image carries iptables and its
# libraries from the same Debian packages as the node (nft backend, as the
# node's own iptables), and nothing else.
step "kube-proxy image (kube-proxy + Debian's iptables)"
ctx=$OUT/ctx/kube-proxy
rm -rf "$ctx" && mkdir -p "$ctx/root"
docker run --rm --entrypoint /bin/sh "$BASE" -c '
	for p in iptables libxtables12 libip4tc2 libip6tc2 libnftnl11 libmnl0 libnetfilter-conntrack3 libnfnetlink0 conntrack libc6 libgcc-s1 libjansson4 libnftables1 nftables libedit2 libbsd0 libmd0 libtinfo6 libgmp10 libxtables12; do
		dpkg -L "$p" 2>/dev/null
	done | while read -r f; do
		# merged /usr: packages name /lib/..., the files live in /usr/lib/...
		case $f in /lib/*|/bin/*|/sbin/*|/lib64/*) f=/usr$f ;; esac
		[ -d "$f" ] && [ ! -L "$f" ] || echo "$f"
	done | sort -u >/tmp/files
	ls -d /etc/alternatives/ip* /etc/alternatives/eb* /etc/alternatives/arp* /usr/sbin/ip*tables* /usr/sbin/ebtables* /usr/sbin/arptables* /lib64 /bin /sbin /lib 2>/dev/null >>/tmp/files
	tar --no-recursion -cf - -T /tmp/files 2>/dev/null' | tar -C "$ctx/root" -xf -
mkdir -p "$ctx/root/usr/local/bin" "$ctx/root/run" "$ctx/root/tmp" "$ctx/root/var/run"
cp "$K8S_BIN/kube-proxy" "$ctx/root/usr/local/bin/kube-proxy"
tar -C "$ctx/root" -cf - . | docker import --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
	--change 'ENTRYPOINT ["/usr/local/bin/kube-proxy"]' - "registry.k8s.io/kube-proxy:$KUBE_VERSION" >/dev/null
docker save -o "$IMGS/kube-proxy.tar" "registry.k8s.io/kube-proxy:$KUBE_VERSION"

step "node filesystem: kind's base files, Kubernetes binaries, manifests"
ctx=$OUT/ctx/node
rm -rf "$ctx" && mkdir -p "$ctx/files" "$ctx/bin"
cp -a "$KIND_DIR/images/base/files/." "$ctx/files/"
chmod -R u+w "$ctx/files"
# This sandbox (and any host without CAP_SYS_RESOURCE) cannot give a pod
# sandbox a negative oom_score_adj; the pause image is the one built here.
sed -i -e 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' \
	-e "s|sandbox_image = \".*\"|sandbox_image = \"registry.k8s.io/pause:$PAUSE_TAG\"|" \
	"$ctx/files/etc/containerd/config.toml"
grep -q 'restrict_oom_score_adj = true' "$ctx/files/etc/containerd/config.toml" || die "kind's containerd config changed shape"
cp "$K8S_BIN"/{kubelet,kubeadm,kubectl} "$ctx/bin/"
cp "$HERE"/files/* "$ctx/"
# containerd's base runtime spec, as kind's base image makes it: the default
# spec with kind's product-files hook and without rlimits.
docker run --rm --entrypoint ctr "$BASE" oci spec | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)
s.setdefault("hooks", {}).setdefault("createContainer", []).append({"path": "/kind/bin/mount-product-files.sh"})
s["process"].pop("rlimits", None)
json.dump(s, sys.stdout, indent=2)' >"$ctx/cri-base.json"
echo "$KUBE_VERSION" >"$ctx/version"
cat >"$ctx/Dockerfile" <<EOF
FROM $BASE
COPY files/usr/local/bin/ /usr/local/bin/
COPY files/kind/ /kind/
COPY files/LICENSES/ /LICENSES/
COPY files/etc/ /etc/
COPY cri-base.json /etc/containerd/cri-base.json
COPY bin/ /usr/bin/
COPY version /kind/version
COPY default-cni.yaml default-storage.yaml /kind/manifests/
COPY 10-kind-bridge.conflist /etc/cni/net.d/10-kind-bridge.conflist
RUN chmod 755 /usr/local/bin/* /kind/bin/* /usr/bin/kubelet /usr/bin/kubeadm /usr/bin/kubectl \\
 && ln -sf /usr/bin/containerd /usr/local/bin/containerd \\
 && ln -sf /usr/bin/ctr /usr/local/bin/ctr \\
 && mkdir -p /opt/cni && rm -rf /opt/cni/bin && ln -s /usr/lib/cni /opt/cni/bin \\
 && find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete \\
 && rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \\
    /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \\
    /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/* \\
 && echo ReadKMsg=no >>/etc/systemd/journald.conf \\
 && ln -sf /usr/lib/systemd/systemd /sbin/init \\
 && systemctl enable kubelet.service containerd.service undo-mount-hacks.service \\
 && systemctl mask systemd-binfmt.service \\
 && mkdir -p /etc/kubernetes/manifests
ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]
EOF
docker build -q -t "$IMAGE-stage" "$ctx" >/dev/null 2>"$OUT/logs/build-node.log" || { cat "$OUT/logs/build-node.log" >&2; exit 1; }

# Load the images as kind's node image build does: containerd in a build
# container, content only (no unpack), then commit.
step "load $(ls "$IMGS" | wc -l) images into containerd's k8s.io namespace"
cid=$(docker run -d --privileged --entrypoint sleep "$IMAGE-stage" infinity)
trap 'docker rm -f -v "$cid" >/dev/null 2>&1 || true' EXIT
docker exec "$cid" bash -c 'nohup containerd >/tmp/containerd.log 2>&1 &'
for i in $(seq 30); do docker exec "$cid" ctr version >/dev/null 2>&1 && break; sleep 1; done
docker exec "$cid" ctr version >/dev/null 2>&1 || die "containerd did not start in the build container"
for t in "$IMGS"/*.tar; do
	docker exec -i "$cid" ctr -n k8s.io images import --all-platforms --no-unpack --digests - <"$t" >/dev/null
done
loaded=$(docker exec "$cid" ctr -n k8s.io images ls -q | grep -v '@sha256' | sort)
for img in $want; do
	grep -qx "$img" <<<"$loaded" || die "image $img missing from containerd after loading"
done
docker exec "$cid" pkill containerd || true
sleep 1
old=$(docker image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)
docker commit \
	--change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' \
	--change 'CMD []' \
	--change "LABEL $LABEL=$inputs" \
	"$cid" "$IMAGE" >/dev/null
docker rm -f -v "$cid" >/dev/null
trap - EXIT
# The component images live on in the node image's containerd; the host
# keeps only the node image (and the root filesystem image, a cache).
docker rmi "$IMAGE-stage" $(docker image inspect -f '{{index .RepoTags 0}}' $(for t in "$IMGS"/*.tar; do tar -xOf "$t" manifest.json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["RepoTags"][0])'; done) 2>/dev/null) >/dev/null 2>&1 || true
[ -n "$old" ] && [ "$old" != "$(docker image inspect -f '{{.Id}}' "$IMAGE")" ] && docker rmi "$old" >/dev/null 2>&1 || true
# The image archives and build contexts are in the image now (~1 GB).
rm -rf "$IMGS" "$OUT/ctx"
step "built $IMAGE ($(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}'))"
echo "$IMAGE"
