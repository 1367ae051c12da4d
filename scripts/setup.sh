#!/usr/bin/env bash
# Install what agentbox needs on a Debian/Ubuntu host (Chromium, Python with numpy/matplotlib, the
# compilers node-pty is built with), then its npm packages, then build. Safe to run again: it
# installs only what is missing, so it also runs as an ordinary user once everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  chromium fonts-liberation python3 python3-venv python3-pip python3-numpy python3-matplotlib
  # node-pty has no Linux prebuild: npm ci compiles it with node-gyp, which needs these
  make g++
  # setpriv and prlimit (the hub runs servers under other uids, with limits), ps and friends
  util-linux procps
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
    echo "agentbox setup: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
  echo "agentbox setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# node-gyp downloads Node's C headers unless told where they are. Node's own tarballs and the
# official images ship them under <prefix>/include/node (/usr/local in node:22, /usr for Debian's
# nodejs), so point it there when they exist and the build needs the npm registry only.
node_prefix="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
if [ -z "${npm_config_nodedir:-}" ] && [ -f "$node_prefix/include/node/node.h" ]; then
  export npm_config_nodedir="$node_prefix"
fi

# Node 20.16+ or 22.3+ (package.json engines): say so now rather than fail somewhere in npm ci
node scripts/engine-notes.mjs check

# npm ci only when nothing is installed yet or the lock file changed since
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  [ -n "${npm_config_nodedir:-}" ] && echo "agentbox setup: native addons build against Node's headers in $npm_config_nodedir/include/node"
  # npm's EBADENGINE warnings (dev-only packages declaring Node 22) become one line that says what they mean
  npm_log="$(mktemp)"
  if ! npm ci --no-audit --no-fund 2>"$npm_log"; then
    cat "$npm_log" >&2
    rm -f "$npm_log"
    exit 1
  fi
  grep -v EBADENGINE "$npm_log" >&2 || true
  node scripts/engine-notes.mjs explain "$npm_log"
  rm -f "$npm_log"
fi
npm run build
