#!/usr/bin/env bash
# Install what agentbox needs on a Debian/Ubuntu host (Chromium, Python with numpy/matplotlib),
# then its npm packages, then build. Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(chromium fonts-liberation python3 python3-venv python3-pip python3-numpy python3-matplotlib)
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

# npm ci only when nothing is installed yet or the lock file changed since
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run build
