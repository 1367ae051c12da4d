#!/usr/bin/env bash
# CI's container check, called by .ci/run after the unit tests:
#   install docker.io + debootstrap, start a Docker engine (no bridge, no iptables), build the
#   offline node:22-bookworm-slim stand-in if it is not there yet, build the image, and run the
#   container smoke test (docker/smoke.mjs: ready, every server's tools, one real call each,
#   clean `docker stop`). Containers only ever use host networking; tests talk to loopback only.
#
#   bash docker/ci.sh            AGENTBOX_DOCKER_BENCH=1 also records bench/results/docker.json
#
# Caches that make the next run fast survive a fresh clone: the debootstrapped rootfs and npm
# tarballs in /var/cache/agentbox (AGENTBOX_CACHE), images and build layers in docker's store.
set -euo pipefail
cd "$(dirname "$0")/.."
IMAGE="${AGENTBOX_IMAGE:-agentbox}"
STATE="$(mktemp -d /tmp/agentbox-docker-ci.XXXXXX)"
DOCKERD_PID=""

log() { echo "[docker-ci] $*" >&2; }
die() { echo "[docker-ci] FAILED: $*" >&2; exit 1; }
step() { log "$1 ($(date -u +%H:%M:%S))"; }

cleanup() {
  # quietly: the smoke test's "N passed, N failed" stays the last line CI reads
  if [[ -n "$DOCKERD_PID" ]] && kill -0 "$DOCKERD_PID" 2>/dev/null; then
    kill "$DOCKERD_PID" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 1; done
  fi
  rm -rf "$STATE"
}
trap cleanup EXIT

# --- 1. the tools ---------------------------------------------------------------------------------
step "installing docker.io and debootstrap"
export DEBIAN_FRONTEND=noninteractive
# Another apt may hold the lock for a while (a machine's own start-up); wait for it.
apt-get -o DPkg::Lock::Timeout=600 update -q >"$STATE/apt.log" 2>&1 || { tail -20 "$STATE/apt.log" >&2; die "apt-get update failed"; }
apt-get -o DPkg::Lock::Timeout=600 install -y -q docker.io debootstrap >>"$STATE/apt.log" 2>&1 \
  || { tail -20 "$STATE/apt.log" >&2; die "apt-get install docker.io debootstrap failed"; }

# --- 2. the engine --------------------------------------------------------------------------------
if docker info >/dev/null 2>&1; then
  log "a Docker engine is already running; using it"
else
  step "starting dockerd --bridge=none --iptables=false"
  command -v dockerd >/dev/null || die "dockerd is not installed although docker.io is: cannot start the Docker engine"
  dockerd --bridge=none --iptables=false >"$STATE/dockerd.log" 2>&1 &
  DOCKERD_PID=$!
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    kill -0 "$DOCKERD_PID" 2>/dev/null || break
    sleep 1
  done
  if ! docker info >/dev/null 2>&1; then
    tail -30 "$STATE/dockerd.log" >&2
    die "the Docker engine (dockerd --bridge=none --iptables=false) could not start, so the image cannot be built or tested; its log is above"
  fi
  log "Docker engine up: $(docker version -f '{{.Server.Version}}')"
fi

# --- 3. the base image and the image ----------------------------------------------------------------
step "base image node:22-bookworm-slim (local stand-in)"
bash docker/base-image.sh || die "could not build the node:22-bookworm-slim stand-in"

step "docker build --network host -t $IMAGE ."
build_start=$SECONDS
docker build --network host -t "$IMAGE" . >"$STATE/build.log" 2>&1 || { tail -60 "$STATE/build.log" >&2; die "docker build failed"; }
log "built $IMAGE in $((SECONDS - build_start)) s, $(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}')"
# Old untagged layers from earlier builds would fill the disk run after run; recent ones are
# the build cache of the next run.
docker image prune -f --filter "until=72h" >/dev/null 2>&1 || true

# --- 4. the smoke test ----------------------------------------------------------------------------
[[ -d node_modules/@modelcontextprotocol/sdk ]] || die "node_modules is missing: run npm ci before docker/ci.sh (the smoke test uses the MCP SDK client)"
step "smoke test"
node docker/smoke.mjs --image "$IMAGE" || die "the container smoke test failed (see the checks above)"

if [[ "${AGENTBOX_DOCKER_BENCH:-}" == 1 ]]; then
  step "benchmark"
  node bench/docker.mjs --image "$IMAGE" || die "the docker benchmark failed"
fi
