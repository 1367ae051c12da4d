#!/usr/bin/env bash
# The README's test command (its Quick start) on a fresh machine: a clean copy of the checkout, in a new container of
# the node:22-bookworm-slim stand-in (docker/base-image.sh: root, Docker's default capabilities,
# host networking so only what the host reaches is reachable), runs exactly
#
#   npm run setup && npm test
#
# The image has no python3, Chromium or compilers: setup must install them, so a missing install
# step fails here. Output streams as it comes; the exit code is the command's.
#
#   bash docker/test-in-container.sh              the committed tree (git archive HEAD)
#   bash docker/test-in-container.sh --worktree   the work tree as it is, uncommitted edits included
#                                                 (tracked and untracked files, not ignored ones)
#
# What is cached between runs (AGENTBOX_CACHE, default /var/cache/agentbox): downloaded .deb files
# and npm's tarball cache. Both only save downloads; apt and npm still resolve and install
# everything from scratch in each container, so they change nothing about what is tested.
set -euo pipefail
cd "$(dirname "$0")/.."
ENGINE_LOG_PREFIX=test-in-container
source docker/engine.sh

BASE="${BASE_TAG:-node:22-bookworm-slim}"
CACHE="${AGENTBOX_CACHE:-/var/cache/agentbox}"
SOURCE=head
case "${1:-}" in
  "") ;;
  --worktree) SOURCE=worktree ;;
  *) echo "usage: bash docker/test-in-container.sh [--worktree]" >&2; exit 2 ;;
esac

NAME="agentbox-test-$$"
cleanup() {
  docker rm -f "$NAME" >/dev/null 2>&1 || true
  engine_down
}
trap cleanup EXIT
trap 'exit 130' INT TERM

engine_up

mkdir -p "$CACHE/apt-archives/partial" "$CACHE/npm"
# The official images delete downloaded .deb files after every install (docker-clean); keep them
# in the mounted cache instead. Only where the packages come from changes, never which.
KEEP_DEBS="$CACHE/apt-keep-debs.conf"
printf '%s\n' '#clear DPkg::Post-Invoke;' '#clear APT::Update::Post-Invoke;' \
  'Binary::apt::APT::Keep-Downloaded-Packages "true";' >"$KEEP_DEBS"

# The tree goes in on stdin as a tar, so nothing from the host (node_modules, dist, workspace,
# caches) is in the container unless it is in the checkout.
source_tar() {
  if [[ $SOURCE == head ]]; then
    git archive --format=tar HEAD
  else
    # node_modules may be a symlink to a shared install, which .gitignore's "node_modules/" misses
    git ls-files -z --cached --others --exclude-standard -- . ':!node_modules' ':!dist' ':!workspace' \
      | xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' _ | tar -c --null -T -
  fi
}

echo "[test-in-container] $BASE: npm run setup && npm test ($SOURCE, $(git rev-parse --short HEAD), $(date -u +%H:%M:%S))" >&2
start=$SECONDS
status=0
# --init: an init as PID 1 reaps orphans, as on any machine. Without it PID 1 is npm, which never
# reaps processes it did not start, so a child that outlives a killed hub and exits stays a zombie
# and the supervision test's "the orphaned child exits" waits on a process that already ended.
source_tar | docker run --rm -i --init --name "$NAME" --network host \
  -v "$CACHE/apt-archives:/var/cache/apt/archives" \
  -v "$KEEP_DEBS:/etc/apt/apt.conf.d/zz-agentbox-keep-debs:ro" \
  -v "$CACHE/npm:/root/.npm" \
  --entrypoint /bin/bash "$BASE" \
  -c 'set -e; mkdir /src; tar -x -C /src; cd /src; exec bash -c "npm run setup && npm test" </dev/null' &
# In the background and waited for, so a TERM or INT to this script runs its trap at once (which
# removes the container) instead of after the container has finished.
wait $! || status=$?
echo "[test-in-container] exit $status after $((SECONDS - start)) s" >&2
exit "$status"
