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
ENGINE_LOG_PREFIX=docker-ci
source docker/engine.sh

log() { echo "[docker-ci] $*" >&2; }
die() { echo "[docker-ci] FAILED: $*" >&2; exit 1; }
step() { log "$1 ($(date -u +%H:%M:%S))"; }

cleanup() {
  # quietly: the smoke test's "N passed, N failed" stays the last line CI reads
  engine_down
  rm -rf "$STATE"
}
trap cleanup EXIT

# --- 1-3. the tools, the engine, the base image (docker/engine.sh) ------------------------------
engine_up

# --- the image --------------------------------------------------------------------------------------
step "docker build --network host -t $IMAGE ."
build_start=$SECONDS
docker build --network host -t "$IMAGE" . >"$STATE/build.log" 2>&1 || { tail -60 "$STATE/build.log" >&2; die "docker build failed"; }
log "built $IMAGE in $((SECONDS - build_start)) s, $(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}')"
# Old untagged layers from earlier builds would fill the disk run after run; recent ones are
# the build cache of the next run.
docker image prune -f --filter "until=72h" >/dev/null 2>&1 || true

# --- 4. the smoke test ----------------------------------------------------------------------------
[[ -d node_modules/@modelcontextprotocol/sdk ]] || die "node_modules is missing: run npm ci before docker/ci.sh (the smoke test uses the MCP SDK client)"
[[ -f dist/test/markitdown/fixtures.js ]] || die "dist/ is not built: run npm run setup (or npm run build) before docker/ci.sh (the smoke test converts documents made by the test fixtures)"
step "smoke test"
node docker/smoke.mjs --image "$IMAGE" || die "the container smoke test failed (see the checks above)"

if [[ "${AGENTBOX_DOCKER_BENCH:-}" == 1 ]]; then
  step "benchmark"
  node bench/docker.mjs --image "$IMAGE" || die "the docker benchmark failed"
fi
