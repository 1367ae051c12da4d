#!/usr/bin/env node
// Render deploy/nginx/agentbox.conf.template into a complete nginx.conf for N agentbox replicas.
//
// Fixed replicas (hosts, docker, tests): name each replica and its address.
//   node deploy/nginx/render.mjs --listen 0.0.0.0:8080 \
//     --replica r1=10.0.0.11:8080 --replica r2=10.0.0.12:8080 --replica r3=10.0.0.13:8080 > nginx.conf
//
// Kubernetes (replicas found through DNS, so scaling the StatefulSet needs no new config):
//   node deploy/nginx/render.mjs --listen 8080 --statefulset agentbox \
//     --pods agentbox.agentbox.svc.cluster.local --ready agentbox-ready.agentbox.svc.cluster.local \
//     --port 8080 --resolver kube-dns.kube-system.svc.cluster.local
//   Requests naming a session or a context handle go to `<pod>.<--pods>` (a headless Service that also
//   publishes pods that are not ready, so a draining pod's sessions still reach it); the rest to the pods behind `--ready`
//   (re-resolved as pods come and go: nginx >= 1.27.3 for `server ... resolve`).
//
// Other flags: --prefix <dir> puts pid, logs and temp files there (default /tmp/agentbox-nginx),
// --workers <n|auto> (default auto), --access-log <path|off> (default off), --error-log <path|stderr>.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const TEMPLATE = path.join(path.dirname(fileURLToPath(import.meta.url)), "agentbox.conf.template");
// What AGENTBOX_REPLICA accepts: a DNS label, so it is also safe inside nginx's config.
const REPLICA_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/;
const LISTEN = /^((\[[0-9a-fA-F:.]+\]|[0-9.]+):)?\d{1,5}$/;
const DNS_NAME = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;

function fail(message) {
  throw new Error(`render.mjs: ${message}`);
}

/**
 * @param {{ listen: string, replicas?: Array<{ name: string, address: string }>,
 *   kubernetes?: { statefulset: string, pods: string, ready: string, port: number, resolver: string },
 *   prefix?: string, workers?: string, accessLog?: string, errorLog?: string }} options
 * @returns {string} the nginx.conf text
 */
export function renderNginx(options) {
  const { listen, replicas = [], kubernetes } = options;
  const prefix = options.prefix ?? "/tmp/agentbox-nginx";
  if (!LISTEN.test(listen)) fail(`--listen must be a port or address:port, got "${listen}"`);
  for (const [flag, value] of [["--prefix", prefix], ["--error-log", options.errorLog ?? ""], ["--access-log", options.accessLog ?? ""]]) {
    if (/[\s;{}'"$#]/.test(value)) fail(`${flag} must be a plain path, got "${value}"`);
  }
  if (!kubernetes && replicas.length === 0) fail("give at least one --replica name=host:port, or --statefulset for Kubernetes");
  if (kubernetes && replicas.length) fail("give either --replica (fixed replicas) or --statefulset (Kubernetes), not both");

  let pinned, upstreams, pool, resolver;
  if (kubernetes) {
    const { statefulset, pods, ready, port, resolver: dns } = kubernetes;
    if (!REPLICA_NAME.test(statefulset)) fail(`--statefulset must be a DNS label, got "${statefulset}"`);
    for (const [flag, name] of [["--pods", pods], ["--ready", ready], ["--resolver", dns]]) {
      if (!DNS_NAME.test(name)) fail(`${flag} must be a DNS name, got "${name}"`);
    }
    if (!Number.isInteger(port) || port < 1 || port > 65535) fail(`--port must be a port number, got "${port}"`);
    // StatefulSet pods are <statefulset>-<ordinal>; any other name is no replica of ours
    pinned = `        "~^${statefulset}-[0-9]+$" "$agentbox_replica.${pods}:${port}";`;
    upstreams = "";
    pool = `        zone agentbox_any 64k;\n        server ${ready}:${port} resolve max_fails=1 fail_timeout=5s;`;
    resolver = `    # Pod addresses change as pods restart: resolve at request time, briefly cached.\n    resolver ${dns} valid=5s ipv6=off;\n    resolver_timeout 3s;\n`;
  } else {
    const seen = new Set();
    for (const { name, address } of replicas) {
      if (!REPLICA_NAME.test(name)) fail(`replica name "${name}" is not a DNS label (lower-case letters, digits, '-'), as AGENTBOX_REPLICA requires`);
      if (!HOST_PORT.test(address)) fail(`replica ${name}: address must be host:port, got "${address}"`);
      if (seen.has(name)) fail(`replica ${name} is named twice`);
      seen.add(name);
    }
    pinned = replicas.map(({ name }) => `        ${name} agentbox_replica_${name};`).join("\n");
    upstreams = replicas
      .map(({ name, address }) => `    upstream agentbox_replica_${name} {\n        server ${address} max_fails=0;\n        keepalive 8;\n    }\n`)
      .join("");
    pool = replicas.map(({ address }) => `        server ${address} max_fails=1 fail_timeout=5s;`).join("\n");
    resolver = "";
  }

  const values = {
    WORKER_PROCESSES: options.workers ?? "auto",
    PID_FILE: path.join(prefix, "nginx.pid"),
    ERROR_LOG: options.errorLog ?? path.join(prefix, "error.log"),
    ACCESS_LOG: !options.accessLog || options.accessLog === "off" ? "off" : options.accessLog,
    TEMP_DIR: prefix,
    RESOLVER: resolver,
    PINNED: pinned,
    UPSTREAMS: upstreams,
    POOL: pool,
    LISTEN: listen,
  };
  return fs.readFileSync(TEMPLATE, "utf8").replace(/\{\{([A-Z_]+)\}\}/g, (_, key) => {
    if (!(key in values)) fail(`the template names an unknown value {{${key}}}`);
    return values[key];
  });
}

function main() {
  const { values } = parseArgs({
    options: {
      listen: { type: "string", default: "8080" },
      replica: { type: "string", multiple: true, default: [] },
      statefulset: { type: "string" },
      pods: { type: "string" },
      ready: { type: "string" },
      port: { type: "string", default: "8080" },
      resolver: { type: "string", default: "kube-dns.kube-system.svc.cluster.local" },
      prefix: { type: "string" },
      workers: { type: "string" },
      "access-log": { type: "string" },
      "error-log": { type: "string" },
    },
    strict: true,
  });
  const replicas = values.replica.map((spec) => {
    const cut = spec.indexOf("=");
    if (cut < 1) fail(`--replica takes name=host:port, got "${spec}"`);
    return { name: spec.slice(0, cut), address: spec.slice(cut + 1) };
  });
  const kubernetes = values.statefulset
    ? {
        statefulset: values.statefulset,
        pods: values.pods ?? fail("--statefulset needs --pods <headless service FQDN>"),
        ready: values.ready ?? fail("--statefulset needs --ready <service FQDN of ready pods>"),
        port: Number(values.port),
        resolver: values.resolver,
      }
    : undefined;
  process.stdout.write(renderNginx({ listen: values.listen, replicas, kubernetes, prefix: values.prefix, workers: values.workers, accessLog: values["access-log"], errorLog: values["error-log"] }));
}

// run as a script (by any path to it: a symlinked checkout too), not imported
if (process.argv[1] && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href) {
  try {
    main();
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
}
