#!/bin/bash
# agentbox container entry point, started by tini.
#
#   agentbox-entrypoint serve   the image's default: prepare the container (remap the `agent` user
#                               to AGENTBOX_UID / AGENTBOX_GID, check the workspace), then run the
#                               hub and start it again if it dies (supervise, below)
#   agentbox-entrypoint CMD...  prepare the container, then exec CMD
#   agentbox-entrypoint hub     the hub alone, no restarts (Kubernetes restarts the container): as
#                               `agent`'s tenant hub when started as root, else as the --user
#   agentbox-entrypoint --flag… hub flags instead of a command (`docker run -i agentbox --stdio`):
#                               the hub itself in the foreground with those flags
#
# Two ways to start the container both work:
#   - as root (the default): the hub drops to `agent`, which needs CAP_SETUID/CAP_SETGID (in
#     Docker's default set); AGENTBOX_UID/AGENTBOX_GID make a mounted /workspace stay owned by the
#     host user.
#   - with --user agent / --user UID:GID (for example with --cap-drop ALL): nothing needs a
#     capability; the hub runs as that user.
set -euo pipefail

say() { echo "agentbox-entrypoint: $*" >&2; }

# Is capability number $1 in this process's effective set? (CAP_CHOWN=0, SETGID=6, SETUID=7)
has_cap() {
  local eff
  eff="$(awk '/^CapEff:/ { print $2 }' /proc/self/status)"
  (((16#$eff >> $1) & 1))
}

home_of() { getent passwd "$1" | cut -d: -f6; }

is_id() { [[ "$1" =~ ^[0-9]+$ ]]; }

remap_agent() {
  local uid="${AGENTBOX_UID:-}" gid="${AGENTBOX_GID:-}" old_uid home
  [[ -z "$uid" && -z "$gid" ]] && return 0
  if [[ -n "$uid" ]] && ! is_id "$uid"; then say "AGENTBOX_UID must be a numeric user id, got '$uid'"; exit 64; fi
  if [[ -n "$gid" ]] && ! is_id "$gid"; then say "AGENTBOX_GID must be a numeric group id, got '$gid'"; exit 64; fi
  # as numbers: "00" is root too
  [[ -n "$uid" ]] && uid=$((10#$uid))
  [[ -n "$gid" ]] && gid=$((10#$gid))
  # `-e AGENTBOX_UID=$(id -u)` typed by root on the host: agents never run as root, and root on the
  # host reads and writes the files of any uid, so agent keeps its own ids and the container starts.
  if [[ "$uid" == 0 ]]; then say "AGENTBOX_UID=0 (root) is ignored: agents never run as root; agent keeps uid $(id -u agent), whose files root on the host can use"; uid=""; fi
  if [[ "$gid" == 0 ]]; then say "AGENTBOX_GID=0 (root) is ignored: agent keeps gid $(id -g agent)"; gid=""; fi
  [[ -z "$uid" && -z "$gid" ]] && return 0
  old_uid="$(id -u agent)"
  home="$(home_of agent)"
  # -o: the host's id may already belong to someone in the image (1000 was `node` upstream)
  [[ -n "$gid" && "$gid" != "$(id -g agent)" ]] && groupmod -o -g "$gid" agent
  [[ -n "$uid" && "$uid" != "$old_uid" ]] && usermod -o -u "$uid" agent
  chown -R agent:agent "$home"
  # The image's own /workspace follows the user; a mounted folder is the host's and is left as it
  # is (only its top is taken over when it still belongs to the image's old uid).
  if [[ "$(stat -c %u /workspace)" == "$old_uid" ]]; then chown agent:agent /workspace; fi
  say "user agent is now uid $(id -u agent), gid $(id -g agent)"
}

prepare() {
  if [[ "$(id -u)" == 0 ]]; then
    if ! has_cap 6 || ! has_cap 7; then
      say "started as root without CAP_SETUID/CAP_SETGID (for example --cap-drop ALL), so the hub cannot"
      say "switch to the unprivileged user 'agent'. Start the container with --user agent (or"
      say "--user UID:GID, the owner of a mounted /workspace) instead; AGENTBOX_UID/AGENTBOX_GID need"
      say "Docker's default capabilities."
      exit 64
    fi
    remap_agent
  else
    if [[ -n "${AGENTBOX_UID:-}${AGENTBOX_GID:-}" ]]; then
      say "AGENTBOX_UID/AGENTBOX_GID are ignored: the container already runs as uid $(id -u) (--user)"
    fi
  fi
  if [[ "$(id -u)" != 0 && ! -w /workspace ]]; then
    say "warning: /workspace is not writable by uid $(id -u); tools that write files will fail"
  fi
}

run_hub() {
  cd /app
  if [[ "$(id -u)" == 0 ]]; then
    # The hub keeps root's default capabilities so that it can run every tenant's servers, and
    # everything an agent starts, under that tenant's own uid (without capabilities). A keyless
    # or one-key hub has one tenant: the `agent` user (which AGENTBOX_UID remaps).
    export AGENTBOX_TENANT_UID="${AGENTBOX_TENANT_UID:-$(id -u agent)}"
    # Same pid after exec, so a SIGTERM for this process reaches the hub itself.
    exec /usr/local/bin/node /app/dist/bundle/hub/main.js "$@"
  fi
  # A --user uid may have no passwd entry and so no home; Chromium and Python want a writable one.
  local home
  home="$(home_of "$(id -u)" || true)"
  if [[ -z "$home" || ! -w "$home" ]]; then
    home=/tmp/agentbox-home
    mkdir -p "$home"
  fi
  export HOME="$home"
  exec /usr/local/bin/node /app/dist/bundle/hub/main.js "$@"
}

# The hub, started again when it dies unasked, as a supervisor would without one (supervisord took
# about 1.5 s of every start: Python's own start, then a second before it spawned anything). A
# SIGTERM or SIGINT (docker stop, through tini) is passed to the hub, which drains and exits; its
# status is the container's. A hub that dies within MIN_UP_SECONDS of starting, MAX_QUICK_DEATHS
# times in a row, is not started again: the container exits with its status and the log says why.
MIN_UP_SECONDS=3
MAX_QUICK_DEATHS=5
supervise() {
  local hub="" stopping="" status started quick=0
  trap 'stopping=1; [[ -n "$hub" ]] && kill -TERM "$hub" 2>/dev/null || true' TERM INT
  while true; do
    started=$SECONDS
    # a subshell of this script, so its exec replaces the subshell and the hub is this pid
    run_hub "$@" &
    hub=$!
    status=0
    wait "$hub" || status=$?
    # a signal ends `wait` early (status > 128): wait on until the hub itself has exited
    while kill -0 "$hub" 2>/dev/null; do
      status=0
      wait "$hub" || status=$?
    done
    [[ -n "$stopping" ]] && exit "$status"
    if ((SECONDS - started < MIN_UP_SECONDS)); then quick=$((quick + 1)); else quick=1; fi
    if ((quick >= MAX_QUICK_DEATHS)); then
      say "the hub exited with status $status $quick times in a row within ${MIN_UP_SECONDS} s of starting; not starting it again"
      exit "$status"
    fi
    say "the hub exited with status $status; starting it again"
    sleep 1
  done
}

if [[ "${1:-}" == "hub" ]]; then
  shift
  run_hub "$@"
fi
prepare
if [[ "${1:-}" == "serve" ]]; then
  shift
  supervise "$@"
fi
if [[ "${1:-}" == -* ]]; then
  run_hub "$@"
fi
exec "$@"
