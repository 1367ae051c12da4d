#!/usr/bin/env bash
# Install what agentbox needs on a Debian/Ubuntu host (Chromium, Python with numpy/matplotlib, the
# compilers node-pty is built with), then its npm packages, then build; and what its tests need
# (nginx for the replica tests, curl for the documentation's examples, a Node 22 for the conformance suite on an older Node), so that
# `npm test` installs nothing while it runs. Safe to run again: it installs only what is missing,
# so it also runs as an ordinary user once everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  chromium fonts-liberation python3 python3-venv python3-pip python3-numpy python3-matplotlib
  # node-pty has no Linux prebuild: npm ci compiles it with node-gyp, which needs these
  make g++
  # setpriv and prlimit (the hub runs servers under other uids, with limits), ipcrm (what tenants leave in System V IPC), ps and friends
  util-linux procps
  # the documentation's shell examples use curl, and test/docs runs every one as printed
  curl
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# the replica tests run the shipped router config (deploy/nginx/run.mjs) with any nginx there is
nginx_missing=true
for candidate in /usr/sbin/nginx /usr/bin/nginx /usr/local/sbin/nginx; do [ -x "$candidate" ] && nginx_missing=false; done
if [ ${#missing[@]} -gt 0 ] || $nginx_missing; then
  if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
    echo "agentbox setup: need root (or sudo) to install: ${missing[*]}$($nginx_missing && echo " nginx-light")" >&2
    exit 1
  fi
  $sudo apt-get update -qq
  # Debian 12 and Ubuntu ship the small build as nginx-light; later Debian has only nginx
  if $nginx_missing; then
    if apt-cache show nginx-light >/dev/null 2>&1; then missing+=(nginx-light); else missing+=(nginx); fi
  fi
  echo "agentbox setup: installing ${missing[*]}"
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

# The MCP conformance suite and the MCP Inspector CLI (dev dependencies) run on Node 22 or later. On an older Node, a Node 22
# from the npm package node-linux-<arch> goes into .node22/ (not node_modules: its bin/node would
# shadow this Node in every npm script), where test/helpers/node22.ts finds it.
node22="node-linux-$(node -p process.arch)"
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ] && [ ! -x ".node22/node_modules/$node22/bin/node" ]; then
  echo "agentbox setup: installing Node 22 ($node22) into .node22/ for the conformance suite and the Inspector CLI"
  npm install --prefix .node22 --no-save --no-audit --no-fund --loglevel=error "$node22@22" >/dev/null
fi
npm run build
