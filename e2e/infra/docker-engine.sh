#!/usr/bin/env bash
# Docker for the kind tests. `up` makes a Docker engine answer: it installs
# Debian's docker.io when no engine is there and starts dockerd by hand (no
# init system starts it here). `down` stops only what `up` started.
#
# Sandbox adaptation: where the capability bounding set lacks
# CAP_SYS_RESOURCE, runc cannot start privileged containers (kind's nodes).
# Then, and only then, `up` registers a runtime wrapper that removes that
# capability from the OCI spec before it execs runc. This adapts the test
# machine; the product never carries it.
set -euo pipefail

STATE_DIR=${SCHEDQ_DOCKER_STATE:-/var/lib/schedq-docker-engine}
STATE=$STATE_DIR/state
WRAPPER=/usr/local/libexec/schedq-runc-nosysresource
DAEMON_JSON=/etc/docker/daemon.json
LOG=$STATE_DIR/dockerd.log
WAIT=${SCHEDQ_DOCKER_WAIT:-60}

say() { echo "docker-engine: $*"; }
die() { echo "docker-engine: $*" >&2; exit 1; }

answers() { timeout 10 docker info >/dev/null 2>&1; }

# CapBnd is hex; bit 24 is CAP_SYS_RESOURCE.
lacks_sys_resource() {
	local bnd
	bnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
	(( (16#$bnd >> 24 & 1) == 0 ))
}

write_wrapper() {
	mkdir -p "$(dirname "$WRAPPER")"
	cat >"$WRAPPER" <<'EOF'
#!/usr/bin/python3
# Written by e2e/infra/docker-engine.sh: this sandbox cannot grant CAP_SYS_RESOURCE,
# so remove it from the OCI spec (bundle config.json on create/run, the
# --process file on exec) and exec the real runc unchanged otherwise.
import json, os, sys
args = sys.argv[1:]
def strip(path):
    try:
        with open(path) as f:
            spec = json.load(f)
    except OSError:
        return
    proc = spec.get("process", spec)
    caps = proc.get("capabilities") or {}
    for k in list(caps):
        if isinstance(caps[k], list):
            caps[k] = [c for c in caps[k] if c != "CAP_SYS_RESOURCE"]
    with open(path, "w") as f:
        json.dump(spec, f)
def flag(name):
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None
cmd = next((a for a in args if a in ("create", "run", "exec")), None)
if cmd in ("create", "run"):
    b = flag("--bundle") or flag("-b") or "."
    strip(os.path.join(b, "config.json"))
elif cmd == "exec":
    p = flag("--process") or flag("-p")
    if p:
        strip(p)
os.execv("/usr/bin/runc", ["runc"] + args)
EOF
	chmod 755 "$WRAPPER"
}

up() {
	mkdir -p "$STATE_DIR"
	if answers; then
		say "an engine already answers; nothing to start"
		return 0
	fi
	local installed=0
	if ! command -v dockerd >/dev/null 2>&1; then
		say "no dockerd: installing Debian's docker.io"
		export DEBIAN_FRONTEND=noninteractive
		timeout 600 apt-get update -qq || die "apt-get update failed"
		timeout 900 apt-get install -y -qq docker.io >/dev/null || die "apt-get install docker.io failed"
		installed=1
	fi
	[ "$(id -u)" = 0 ] || die "starting dockerd needs root"
	local wrapped=0
	if lacks_sys_resource; then
		say "capability bounding set lacks CAP_SYS_RESOURCE: registering runtime wrapper $WRAPPER (sandbox adaptation, test machine only)"
		write_wrapper
		mkdir -p /etc/docker
		[ -f "$DAEMON_JSON" ] && [ ! -f "$STATE_DIR/daemon.json.orig" ] && cp "$DAEMON_JSON" "$STATE_DIR/daemon.json.orig"
		/usr/bin/python3 - "$DAEMON_JSON" "$WRAPPER" <<'EOF'
import json, os, sys
path, wrapper = sys.argv[1], sys.argv[2]
cfg = json.load(open(path)) if os.path.exists(path) and os.path.getsize(path) else {}
cfg.setdefault("runtimes", {})["schedq-runc"] = {"path": wrapper}
cfg["default-runtime"] = "schedq-runc"
json.dump(cfg, open(path, "w"), indent=2)
EOF
		wrapped=1
	fi
	say "starting dockerd (log: $LOG)"
	# Its own session, so that it outlives the caller's shell and `down`
	# can stop exactly this process.
	setsid dockerd >"$LOG" 2>&1 </dev/null &
	local pid=$!
	printf 'pid=%s\ninstalled=%s\nwrapped=%s\n' "$pid" "$installed" "$wrapped" >"$STATE"
	local i
	for ((i = 0; i < WAIT; i++)); do
		if answers; then
			say "engine up (pid $pid) after ${i}s"
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || { tail -20 "$LOG" >&2; die "dockerd exited"; }
		sleep 1
	done
	tail -20 "$LOG" >&2
	die "dockerd did not answer within ${WAIT}s"
}

down() {
	if [ ! -f "$STATE" ]; then
		say "nothing started by up; leaving any engine alone"
		return 0
	fi
	# shellcheck disable=SC1090
	. "$STATE"
	if [ -n "${pid:-}" ] && kill -0 "$pid" 2>/dev/null; then
		say "stopping dockerd (pid $pid)"
		kill -TERM "$pid"
		local i
		for ((i = 0; i < 30; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 1
		done
		kill -0 "$pid" 2>/dev/null && { say "dockerd still running after 30s; killing it"; kill -KILL "$pid"; }
	fi
	if [ "${wrapped:-0}" = 1 ]; then
		if [ -f "$STATE_DIR/daemon.json.orig" ]; then
			mv "$STATE_DIR/daemon.json.orig" "$DAEMON_JSON"
		else
			rm -f "$DAEMON_JSON"
		fi
		rm -f "$WRAPPER"
		say "runtime wrapper removed"
	fi
	rm -f "$STATE"
	say "down"
}

case "${1:-}" in
up) up ;;
down) down ;;
*) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
