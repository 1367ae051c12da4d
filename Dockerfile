# agentbox: one MCP endpoint with a browser, files, a terminal, document conversion, arXiv search
# and code execution.
#
#   docker build -t agentbox .
#   docker run --rm -p 8080:8080 agentbox        # MCP at http://localhost:8080/mcp (and /v1/mcp)
#
# Two stages: `build` has the compilers (node-pty is a native addon) and the dev dependencies;
# the runtime stage gets only the compiled app and production node_modules. Nothing is
# downloaded at run time: Chromium, fonts and the Python data stack come from Debian here.

FROM node:22-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
# node-gyp builds node-pty against the headers that ship with Node in /usr/local/include/node
# instead of downloading them, so the build needs the npm registry only.
ENV npm_config_nodedir=/usr/local
# Node without its symbol table and debug information (~18 MB): they name Node's own C++ functions
# to a native debugger or profiler, which the image does not have; the symbols addons link
# against (node-pty) are the dynamic ones, which stay. strip comes with the compilers here.
RUN cp /usr/local/bin/node /tmp/node && strip /tmp/node

WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY hub ./hub
COPY servers ./servers
COPY scripts/build.mjs scripts/bundle.mjs scripts/runtime-modules.mjs ./scripts/
# node_modules keeps only what is loaded at run time (scripts/runtime-modules.mjs): the packages the
# bundles leave outside and the code server's JavaScript driver imports, with their dependencies;
# everything bundled, and the dev dependencies, go (~30 MB).
# node-pty ships prebuilt binaries for macOS and Windows only (~60 MB); on Linux it loads the
# one compiled above from build/Release, so the others are dropped.
# Type declarations, source maps and documents in node_modules are never loaded at run time (~25 MB),
# nor tsc's source maps in dist/ (the bundles in dist/bundle/ are what runs).
RUN npm run build \
 && node scripts/runtime-modules.mjs --prune \
 && rm -f dist/.tsbuildinfo \
 && find dist -name '*.js.map' -delete \
 && find node_modules/node-pty/prebuilds -mindepth 1 -maxdepth 1 ! -name 'linux-*' -exec rm -rf {} + \
 && find node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.md' -o -name '*.markdown' \) -delete

# The system: Node's base, Debian's packages and the users, flattened below into one layer (see there).
FROM node:22-bookworm-slim AS system
# chromium-headless-shell rather than chromium: it drives Playwright headless just the same and is
# much smaller (it leaves out what a windowed browser needs). Fonts: Liberation for Latin metrics, WenQuanYi Zen Hei for CJK,
# so pages in those scripts render as text rather than boxes. python3-munkres satisfies
# python3-fonttools' "python3-scipy | python3-munkres" (matplotlib needs fonttools): without it apt
# picks scipy, which drags in pythran and with it g++, boost and BLAS headers (~600 MB of compilers).
#
# Leaner (issue 16): Debian's dependencies pull in about 500 MB that nothing here runs. Empty
# stand-in packages (version 99:0, so apt counts any dependency on them as met and never replaces
# them; Multi-Arch: allowed, so `perl:any` counts too) keep them out:
#   libgl1-mesa-dri      chromium-common's GL drivers, with libllvm15 and libz3 (~165 MB); the
#                        headless shell renders in software (SwiftShader, shipped with it)
#   python3-sympy        fonttools' symbolic maths (font-variation tooling), with mpmath (~125 MB)
#   unicode-data         fonttools' copy of the Unicode database (~37 MB)
#   perl                 git's scripts in Perl (send-email, svn, ...) (~50 MB); git itself is C
#   python3-pil.imagetk  matplotlib's Tk backend with Tcl/Tk (~10 MB); plots render with Agg
#   libjs-jquery-ui      matplotlib's web backend's script
# dpkg also leaves out manuals, documentation (copyright files stay) and translations.
RUN set -eu; \
    printf '%s\n' 'path-exclude=/usr/share/doc/*' 'path-include=/usr/share/doc/*/copyright' \
      'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/info/*' \
      'path-exclude=/usr/share/locale/*' 'path-include=/usr/share/locale/locale.alias' \
      >/etc/dpkg/dpkg.cfg.d/agentbox-slim; \
    stubs=/tmp/agentbox-stubs; \
    for pkg in libgl1-mesa-dri python3-sympy unicode-data perl python3-pil.imagetk libjs-jquery-ui; do \
      mkdir -p "$stubs/$pkg/DEBIAN"; \
      printf 'Package: %s\nVersion: 99:0+agentbox\nArchitecture: all\nMulti-Arch: allowed\nMaintainer: agentbox <agentbox@localhost>\nDescription: empty stand-in: agentbox does not use %s\n' "$pkg" "$pkg" >"$stubs/$pkg/DEBIAN/control"; \
      dpkg-deb --build "$stubs/$pkg" "$stubs/$pkg.deb" >/dev/null; \
    done; \
    dpkg -i "$stubs"/*.deb >/dev/null; \
    rm -rf "$stubs"; \
    apt-get update; \
    apt-get install -y --no-install-recommends \
      chromium-headless-shell fonts-liberation fonts-wqy-zenhei fontconfig \
      tini \
      python3 python3-pip python3-venv python3-numpy python3-pandas python3-matplotlib python3-munkres \
      git curl ca-certificates; \
    apt-mark hold libgl1-mesa-dri python3-sympy unicode-data perl python3-pil.imagetk libjs-jquery-ui >/dev/null; \
    # the libraries' own test suites (pandas' alone is 36 MB), and Vulkan's validation layer (23 MB),
    # a debugging aid Chromium loads only when asked to
    rm -f /usr/lib/chromium/libVkLayer_khronos_validation.so; \
    rm -rf /usr/lib/python3/dist-packages/pandas/tests /usr/lib/python3/dist-packages/numpy/*/tests \
      /usr/lib/python3/dist-packages/matplotlib/tests /usr/lib/python3/dist-packages/mpl_toolkits/*/tests; \
    # the downloaded .deb files (~185 MB): Debian's own images drop them by apt configuration
    # (docker-clean), a base image without it keeps them; cleaned here either way
    apt-get clean; \
    rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log; \
    # Node's C headers (~65 MB): addons are compiled in the build stage, and the runtime has no
    # compiler to build one with. The base's documentation and translations, which dpkg's rules
    # above keep out of everything installed here.
    rm -rf /usr/local/include/node /usr/share/man/* /usr/share/info/*; \
    find /usr/share/doc -mindepth 2 ! -name copyright ! -type d -delete; \
    find /usr/share/locale -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +

# `agent` is the single tenant of a keyless or one-key hub (the hub runs as root and starts that
# tenant's servers as agent), or the hub itself under --user agent. uid 1000 is `node` in the base
# image: it is replaced, so a host user with uid 1000 owns what agent writes without remapping.
# The config may hold tenants' API keys: only root (the hub) and, for --user agent, the agent user
# through the agentbox-config group may read it; tenants' processes run without supplementary groups.
RUN if id node >/dev/null 2>&1; then userdel --remove node; fi \
 && groupadd --gid 1000 agent \
 && useradd --uid 1000 --gid agent --create-home --shell /bin/bash agent \
 && mkdir -p /workspace \
 && chown agent:agent /workspace \
 && groupadd --system agentbox-config && usermod -aG agentbox-config agent \
 && install -d -m 0750 -o root -g agentbox-config /etc/agentbox \
 && install -d -m 0711 /var/lib/agentbox
# Node itself without its symbol table (stripped in the build stage, see there)
COPY --from=build /tmp/node /usr/local/bin/node

# One layer for the whole system: files removed above from the base's layers would otherwise
# still be shipped in them (a later layer only hides them). The application's layers stay apart
# on top, so an update that changes only agentbox pulls only those. The base's environment is
# what FROM scratch leaves behind; Node needs only PATH of it.
FROM scratch
COPY --from=system / /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# servers/ carries non-TypeScript assets the servers load at run time (Python drivers, ...).
COPY --from=build /app/servers ./servers
COPY docker/entrypoint.sh /usr/local/bin/agentbox-entrypoint
RUN chmod 0755 /usr/local/bin/agentbox-entrypoint

# AGENTBOX_PORT is left unset so a mounted /etc/agentbox/agentbox.json may choose the port;
# the hub's default is 8080. Other settings (AGENTBOX_API_KEY, AGENTBOX_RATE_LIMITS,
# AGENTBOX_LOG_LEVEL, AGENTBOX_CORS_ORIGINS, ...) are read from the environment at start.
ENV NODE_ENV=production \
    AGENTBOX_HOST=0.0.0.0 \
    AGENTBOX_WORKSPACE=/workspace \
    AGENTBOX_PYTHON=/usr/bin/python3 \
    AGENTBOX_CHROMIUM_PATH=/usr/bin/chromium-headless-shell
EXPOSE 8080

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD curl -fsS "http://127.0.0.1:${AGENTBOX_PORT:-8080}/healthz" >/dev/null || exit 1

# tini is PID 1: it reaps zombies and passes docker stop's SIGTERM to the entrypoint, which runs
# the hub and starts it again if it dies (docker/entrypoint.sh, `serve`).
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/agentbox-entrypoint"]
CMD ["serve"]
