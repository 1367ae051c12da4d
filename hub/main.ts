#!/usr/bin/env node
// agentbox: one MCP endpoint in front of many MCP servers.
import fs from "node:fs";
import { parseArgs } from "node:util";
import { createLogger, errorMessage, type Logger } from "../servers/lib/log.js";
import { ConfigError, loadConfig, type HubConfig } from "./config/config.js";
import { createApp } from "./http/app.js";
import { Hub, VERSION } from "./hub.js";
import { MintedSecrets } from "./observability/minted-secrets.js";
import { describeHolders, listenEverywhere, type Listening, type UpgradeHandler } from "./http/listen.js";
import { hubTools } from "./tools/hub-tools.js";
import { firstUntraversable, stateDir, tenantStateFolder } from "./tenants/tenants.js";
import { WorkspaceHeld, WorkspaceLock } from "./tenants/workspace-lock.js";
import { UidOwned } from "./tenants/uid-claims.js";
import { UidHeld } from "./tenants/uid-locks.js";
import { callsInFlight, drain } from "./http/replica.js";
import { upgradesOf } from "./http/live-route.js";
import { TrustedProxies } from "./http/trusted-proxies.js";
import { serveStdio } from "./stdio.js";
import { serviceName, startTracing, stopTracing } from "../servers/lib/tracing.js";

const HELP = `agentbox ${VERSION} — one MCP endpoint in front of many MCP servers (the built-in ones, or those of --config)

Usage: agentbox [options]

  --host <addr>       address to bind (default 127.0.0.1; AGENTBOX_HOST)
  --port <n>          port (default 8080, 0 picks a free one; AGENTBOX_PORT)
  --config <file>     JSON config with mcpServers / rateLimits (AGENTBOX_CONFIG)
  --log-level <lvl>   debug | info | warn | error (AGENTBOX_LOG_LEVEL)
  --stdio             serve MCP over stdin/stdout for a desktop client that launches agentbox
                      (logs go to stderr; HTTP then listens on 127.0.0.1 with a free port unless
                      --port is given, so code can still call tools)
  --version           print the version
  --help              this text

Environment: AGENTBOX_WORKSPACE, AGENTBOX_API_KEY, AGENTBOX_CORS_ORIGINS, AGENTBOX_ALLOWED_HOSTS,
AGENTBOX_RATE_LIMITS (off | JSON), AGENTBOX_SESSION_IDLE_MS, AGENTBOX_MAX_BODY_BYTES,
AGENTBOX_REPLICA (a name that session ids begin with, for a router), AGENTBOX_DRAIN_MS (SIGTERM waits
this long for calls in flight; default 25000), AGENTBOX_PUBLIC_URL and AGENTBOX_PREVIEW_DOMAIN (the
addresses of hub_preview's URLs), AGENTBOX_AUDIT_LOG (the audit trail: stdout, stderr, off or a file
path; default stdout).
The MCP endpoint is http://HOST:PORT/mcp (also /v1/mcp; legacy SSE at /sse).`;

function parseCli() {
  try {
    return parseArgs({
      options: {
        host: { type: "string" },
        port: { type: "string" },
        config: { type: "string" },
        "log-level": { type: "string" },
        version: { type: "boolean" },
        stdio: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }).values;
  } catch (err) {
    process.stderr.write(`agentbox: ${errorMessage(err)}\n\n${HELP}\n`);
    process.exit(2);
  }
}

async function main(): Promise<void> {
  const args = parseCli();
  if (args.help) return void process.stdout.write(HELP + "\n");
  if (args.version) return void process.stdout.write(VERSION + "\n");

  let config;
  try {
    config = loadConfig({
      host: args.stdio && !args.host ? "127.0.0.1" : args.host,
      port: args.port === undefined ? (args.stdio ? 0 : undefined) : Number(args.port),
      config: args.config,
      logLevel: args["log-level"],
    });
  } catch (err) {
    process.stderr.write(`agentbox: ${err instanceof ConfigError ? err.message : errorMessage(err)}\n`);
    process.exit(2);
  }
  if (!Number.isInteger(config.port) || config.port < 0 || config.port > 65535) {
    process.stderr.write(`agentbox: --port must be a port number (0-65535)\n`);
    process.exit(2);
  }

  // in stdio mode stdout carries JSON-RPC: the audit trail goes where the logs go
  if (args.stdio && config.audit.log === "stdout") config.audit.log = "stderr";
  const readable = keysReadableByOthers(config);
  if (readable) process.stderr.write(`agentbox: warning: ${readable}\n`);
  // in stdio mode stdout carries JSON-RPC: logs go to stderr
  const logStream = args.stdio ? process.stderr : process.stdout;
  // what the hub mints is known to its log from the start: no line it writes (or relays from a child) shows a credential
  const secrets = new MintedSecrets();
  const log = createLogger({ component: "hub" }, { level: config.logLevel, write: (line) => logStream.write(line), redact: (text) => secrets.redact(text) });
  // an error no code of the hub handled is a bug, and what it left half done cannot be trusted: say
  // so in a log line of its own (tests fail on it, test/helpers/hub.ts) and stop, as Node would
  process.on("uncaughtException", (err, origin) => {
    log.error("uncaught exception", { origin, error: errorMessage(err), stack: err instanceof Error ? err.stack : undefined });
    process.exit(1);
  });
  let hub: Hub;
  try {
    // OTEL_* (an OTLP endpoint) asks for traces; a protocol this image cannot export with stops the start, said plainly
    if (await startTracing(serviceName())) log.info("exporting traces", { service: serviceName() });
    hub = new Hub(config, log, hubTools, secrets);
  } catch (err) {
    process.stderr.write(`agentbox: ${err instanceof ConfigError ? err.message : errorMessage(err)}\n`);
    process.exit(2);
  }
  // one hub at a time ends processes under a workspace's tenant uids, or under any one uid: a second one would end this one's
  const lock = hub.isolation.mode === "uid" ? takeWorkspace(config, hub, log) : undefined;
  process.once("exit", () => lock?.release());
  const app = createApp(hub);

  const upgrades = upgradesOf(hub.previews, hub.live, new TrustedProxies(config.trustedProxies));
  const server = await listenOnce(hub, app.fetch, config.host, config.port, log, upgrades);
  const { port } = server;
  const shownHost = config.host.includes(":") ? `[${config.host}]` : config.host;
  const loopback = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : shownHost;
  log.info("listening", { url: `http://${shownHost}:${port}`, mcp: `http://${shownHost}:${port}/mcp`, version: VERSION, addresses: server.addresses });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // SIGTERM is how Kubernetes and docker stop a replica: first drain (not ready, no new
    // sessions, calls in flight finish, at most drainMs), then end the children
    const drainMs = signal === "SIGTERM" ? config.drainMs : 0;
    log.info("stopping", { signal, ...(drainMs ? { drainMs, callsInFlight: callsInFlight(hub) } : {}) });
    setTimeout(() => process.exit(1), drainMs + 15_000).unref();
    if (drainMs) {
      const left = await drain(hub, drainMs);
      log.info("drained", left ? { callsCut: left } : {});
    }
    server.close();
    await hub.stop();
    await stopTracing();
    log.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));

  log.info("access", { summary: accessSummary(hub, config.host, port) });
  if (hub.network.warning) log.warn(hub.network.warning);
  try {
    await hub.startChildren(`http://${loopback}:${port}/mcp`, port);
  } catch (err) {
    log.error("cannot start", { error: errorMessage(err) });
    await hub.stop();
    process.exit(2);
  }
  if (hub.collisions.length) {
    for (const collision of hub.collisions) log.error(collision);
    log.error("refusing to start: tool or prompt names collide (see above)");
    await hub.stop();
    process.exit(1);
  }
  if (args.stdio) {
    await serveStdio(hub);
    process.stdin.on("end", () => void stop("stdin closed"));
  }
  // the last line a person sees after `npm start`: where to go next
  log.info(`ready: open http://${loopback}:${port}/playground in a browser; MCP clients connect to http://${loopback}:${port}/mcp`, {
    playground: `http://${loopback}:${port}/playground`,
    mcp: `http://${loopback}:${port}/mcp`,
    workspace: config.workspace,
    servers: hub
      .status()
      .servers.map((s) => `${s.name}:${s.state}:${s.tools}`)
      .join(" "),
  });
}

/**
 * The workspace's lock (./tenants/workspace-lock.ts) and its tenants' uids (./tenants/uid-locks.ts); exits, having
 * touched nothing, when another live hub holds either, or a uid still owns another tenant's folder (./tenants/uid-claims.ts).
 */
function takeWorkspace(config: HubConfig, hub: Hub, log: Logger): WorkspaceLock {
  const dir = stateDir(config);
  let lock: WorkspaceLock | undefined;
  try {
    lock = WorkspaceLock.acquire(dir, config.workspace);
    // a hub's single tenant (no "tenants" configured) takes its uid from AGENTBOX_TENANT_UID
    const setting = config.tenants.length === 1 && config.tenants[0].name === "default" ? "AGENTBOX_TENANT_UID" : '"uid" in its config entry';
    const source = (name: string) => ({ explicit: config.tenants.some((t) => t.name === name && t.uid !== undefined), setting });
    hub.uidLocks?.takeAll(
      hub.tenants.flatMap(({ name, workspace, identity }) =>
        identity ? [{ name, folder: workspace, state: tenantStateFolder(config, name, identity.uid), uid: identity.uid, source: source(name) }] : [],
      ),
    );
    return lock;
  } catch (err) {
    lock?.release();
    if (err instanceof WorkspaceHeld) log.error("refusing to start: another hub serves this workspace", { error: err.message, holder: err.holder.pid });
    else if (err instanceof UidHeld)
      log.error("refusing to start: a tenant's uid is another hub's", { error: err.message, tenant: err.tenant, uid: err.uid, holder: err.holder.pid });
    else if (err instanceof UidOwned)
      log.error("refusing to start: a tenant's uid owns another tenant's files", {
        error: err.message,
        tenant: err.tenant,
        uid: err.uid,
        folder: err.claim.folder,
      });
    else
      log.error("cannot start: the workspace's lock cannot be made", {
        stateDir: dir,
        error: errorMessage(err),
        hint: "AGENTBOX_STATE_DIR must be a folder the hub can write",
      });
    process.exit(1);
  }
}

/**
 * Bind the hub's port on every address its clients may use (./http/listen.ts), once nothing of a tenant
 * is left to hold it: a tenant's process left from an earlier run is killed first, and a port a
 * tenant still holds is refused by name. Exits when the hub cannot listen.
 */
async function listenOnce(
  hub: Hub,
  fetch: Parameters<typeof listenEverywhere>[0],
  host: string,
  port: number,
  log: Logger,
  onUpgrade: UpgradeHandler,
): Promise<Listening> {
  const tenantUids = new Map(hub.tenants.flatMap((t) => (t.identity ? [[t.identity.uid, t.name] as const] : [])));
  await hub.endLeftovers();
  const heldByTenant = describeHolders(port, tenantUids, true);
  if (heldByTenant) {
    log.error(
      "refusing to start: a tenant holds the hub's port, and would receive its clients' requests and keys; stop that process, or choose another --port",
      { port, holders: heldByTenant },
    );
    process.exit(1);
  }
  try {
    return await listenEverywhere(fetch, host, port, onUpgrade);
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
    const holders = e.code === "EADDRINUSE" ? describeHolders(e.port ?? port, tenantUids) : "";
    const hint = e.code === "EADDRINUSE" ? "stop the process holding the port, or choose another --port (AGENTBOX_PORT)" : undefined;
    log.error("cannot listen", {
      host: e.address ?? host,
      port: e.port ?? port,
      error: errorMessage(err),
      ...(holders ? { holders } : {}),
      ...(hint ? { hint } : {}),
    });
    process.exit(1);
  }
}

/** Says so when the config file holds API keys and users other than its owner can read it. */
function keysReadableByOthers(config: { configPath?: string; tenants: Array<{ apiKey?: string }> }): string | undefined {
  const file = config.configPath;
  if (!file || !config.tenants.some((t) => t.apiKey)) return undefined;
  try {
    if (!fs.readFileSync(file, "utf8").includes('"apiKey"')) return undefined;
    const others = (fs.statSync(file).mode & 0o004) !== 0 && firstUntraversable(file) === undefined;
    return others ? `the config file ${file} holds API keys and every user can read it; chmod 600 it (or keep it in a folder others cannot enter).` : undefined;
  } catch {
    return undefined;
  }
}

/** One line on how the hub can be reached and what protects it. */
function accessSummary(hub: Hub, host: string, port: number): string {
  const loopbackOnly = host === "localhost" || host === "::1" || host.startsWith("127.");
  const reach = loopbackOnly ? `loopback only (${host}:${port})` : `every interface (${host}:${port})`;
  const keyed = hub.tenants.filter((t) => t.keyDigest).length;
  const keys = keyed ? `${keyed} API key${keyed > 1 ? "s" : ""} (one per tenant)` : "";
  const signIn = hub.config.oauth ? `a token of ${hub.config.oauth.issuer} (a tenant per person, at most ${hub.config.oauth.maxTenants})` : "";
  const gate =
    keys || signIn
      ? `${[keys, signIn].filter(Boolean).join(" or ")} required on every request`
      : "no API key: only loopback names, IP addresses and AGENTBOX_ALLOWED_HOSTS as Host, only loopback or AGENTBOX_CORS_ORIGINS pages as Origin";
  return `reachable on ${reach}; ${gate}; isolation ${hub.isolation.mode}: ${hub.isolation.summary}`;
}

main().catch((err) => {
  process.stderr.write(`agentbox: ${errorMessage(err)}\n`);
  process.exit(1);
});
