# A Docker engine for CI and local container runs, shared by docker/ci.sh and
# docker/test-in-container.sh. Source it, then:
#
#   engine_up       install docker.io + debootstrap when missing, start dockerd (no bridge, no
#                   iptables: containers use host networking only) unless an engine already
#                   answers, and make sure the offline node:22-bookworm-slim stand-in exists
#   engine_down     stop dockerd if (and only if) engine_up started it
#
# Idempotent: a running engine, an installed docker.io and a built stand-in are all reused, so a
# caller that already ran engine_up (.ci/run) lets the scripts it calls skip straight to work.
# Logs go to stderr with the caller's prefix (ENGINE_LOG_PREFIX, default "engine").
#   AGENTBOX_CACHE   the stand-in's rootfs and npm tarballs (default /var/cache/agentbox)

ENGINE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ENGINE_DOCKERD_PID=""
ENGINE_STATE=""

engine_log() { echo "[${ENGINE_LOG_PREFIX:-engine}] $*" >&2; }
engine_die() { echo "[${ENGINE_LOG_PREFIX:-engine}] FAILED: $*" >&2; exit 1; }

engine_up() {
  ENGINE_STATE="$(mktemp -d /tmp/agentbox-engine.XXXXXX)"

  # --- 1. the tools: only when missing, so a prepared machine needs no apt at all ---------------
  if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
    engine_log "installing docker.io and debootstrap ($(date -u +%H:%M:%S))"
    export DEBIAN_FRONTEND=noninteractive
    # Another apt may hold the lock for a while (a machine's own start-up); wait for it.
    apt-get -o DPkg::Lock::Timeout=600 update -q >"$ENGINE_STATE/apt.log" 2>&1 \
      || { tail -20 "$ENGINE_STATE/apt.log" >&2; engine_die "apt-get update failed"; }
    apt-get -o DPkg::Lock::Timeout=600 install -y -q docker.io debootstrap >>"$ENGINE_STATE/apt.log" 2>&1 \
      || { tail -20 "$ENGINE_STATE/apt.log" >&2; engine_die "apt-get install docker.io debootstrap failed"; }
  fi

  # --- 2. the engine -------------------------------------------------------------------------------
  if docker info >/dev/null 2>&1; then
    engine_log "a Docker engine is already running; using it"
  else
    engine_log "starting dockerd --bridge=none --iptables=false ($(date -u +%H:%M:%S))"
    command -v dockerd >/dev/null || engine_die "dockerd is not installed although docker.io is: cannot start the Docker engine"
    dockerd --bridge=none --iptables=false >"$ENGINE_STATE/dockerd.log" 2>&1 &
    ENGINE_DOCKERD_PID=$!
    for _ in $(seq 1 60); do
      docker info >/dev/null 2>&1 && break
      kill -0 "$ENGINE_DOCKERD_PID" 2>/dev/null || break
      sleep 1
    done
    if ! docker info >/dev/null 2>&1; then
      tail -30 "$ENGINE_STATE/dockerd.log" >&2
      engine_die "the Docker engine (dockerd --bridge=none --iptables=false) could not start; its log is above"
    fi
    engine_log "Docker engine up: $(docker version -f '{{.Server.Version}}')"
  fi

  # --- 3. the base image -----------------------------------------------------------------------------
  engine_log "base image node:22-bookworm-slim (local stand-in) ($(date -u +%H:%M:%S))"
  bash "$ENGINE_DIR/base-image.sh" || engine_die "could not build the node:22-bookworm-slim stand-in"
}

engine_down() {
  if [[ -n "$ENGINE_DOCKERD_PID" ]] && kill -0 "$ENGINE_DOCKERD_PID" 2>/dev/null; then
    kill "$ENGINE_DOCKERD_PID" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$ENGINE_DOCKERD_PID" 2>/dev/null || break; sleep 1; done
  fi
  ENGINE_DOCKERD_PID=""
  [[ -n "$ENGINE_STATE" ]] && rm -rf "$ENGINE_STATE"
  ENGINE_STATE=""
}
