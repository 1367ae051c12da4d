// Settings come from defaults, then the config file (--config / AGENTBOX_CONFIG), then the
// environment, then command-line flags. Every key is optional.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { BUILTIN_SERVERS, BUILTIN_TOOL_RATES } from "../../servers/builtin.js";
import { parseLogLevel, type LogLevel } from "../../servers/lib/log.js";
import { checkedProxies, limitsFromEnv, loadTenants, parsePort, parseRateLimitsEnv, parseReplica, percent, positiveInt } from "./env.js";
import { sessionLimitsFromEnv, type SessionLimits } from "./session-limits.js";
import { previewsFromEnv, type PreviewConfig } from "./previews.js";
import { recordFrom } from "./record.js";
import type { RecordingKind } from "../../servers/lib/recording-names.js";
import { auditConfigFromEnv, type AuditConfig } from "./audit.js";
import { networkFromEnv, type NetworkConfig } from "./network.js";
import { oauthFromEnv, type OAuthConfig } from "./oauth.js";
import {
  ConfigError,
  describeZodError,
  fileSchema,
  type ConfigFile,
  type RateLimitsConfig,
  type ServerConfig,
  type TenantConfig,
  type TenantLimits,
} from "./schema.js";
import { selectionOf, unknownDefaultServers, type SelectionSpec } from "./selection-spec.js";
import { resolveServerPaths } from "./server-paths.js";

export { BUILTIN_SERVERS };
export { ConfigError };
export type { RateLimitsConfig, ServerConfig, TenantConfig, TenantLimits } from "./schema.js";
export type { SessionLimits } from "./session-limits.js";
export type { OAuthConfig } from "./oauth.js";

export const DEFAULT_RATE_LIMITS: RateLimitsConfig = {
  // tasks/get polls: ten a second per client covers many tasks polled every second, and stops a client spinning on it.
  // tools/list is read from the catalog the hub keeps (no server is asked), and clients list often by
  // design: the MCP Inspector's CLI before every call (twice in 2026-07-28), a 2026 client told ttlMs 0
  // whenever it likes. Three times the calls "*" allows holds a flood and never a client listing per call.
  methods: { "tools/list": "300/min", "tasks/*": "600/min" },
  tools: { "*": "100/min", ...BUILTIN_TOOL_RATES },
};

/** What a child's output may cost the hub (AGENTBOX_CHILD_*). */
export interface OutputLimits {
  /** Stderr lines relayed into the hub's log per second; the rest are counted in one summary line. */
  linesPerSecond: number;
  /** Longest stderr line kept; the rest of a longer line is dropped (and said to be). */
  maxLineBytes: number;
  /** Log messages and resource updates taken from the child per second; the rest are dropped. */
  notificationsPerSecond: number;
}

export interface HubConfig {
  host: string;
  port: number;
  workspace: string;
  /**
   * Who may use the hub: one entry per API key (an isolation unit), or a single keyless tenant.
   * AGENTBOX_API_KEY is the one-tenant shorthand.
   */
  tenants: TenantConfig[];
  /** Sign-in with OAuth (auth.oauth, AGENTBOX_OAUTH_*): each person a tenant, made on first sign-in (hub/config/oauth.ts). */
  oauth?: OAuthConfig;
  /** Default per-tenant process and memory caps. */
  limits: TenantLimits;
  /** Where tenants' home folders live when the hub runs them under their own uids. */
  stateDir?: string;
  logLevel: LogLevel;
  corsOrigins: string[];
  /** Extra Host header values to accept besides the bound address and localhost. */
  allowedHosts: string[];
  /** Addresses or CIDR ranges of proxies whose X-Forwarded-For names the client. */
  trustedProxies: string[];
  /** The operator's key for the hub-wide figures on /metrics (AGENTBOX_METRICS_KEY); see hub/http/metrics-gate.ts. */
  metricsKey?: string;
  sessionIdleMs: number;
  /** How long a context minted by hub_new_context lives at most (AGENTBOX_CONTEXT_TTL_MS). */
  contextTtlMs: number;
  /** Per-session instances one server may run at once in a tenant (AGENTBOX_SESSION_INSTANCES; servers with instances "session"). */
  sessionInstances: number;
  maxBodyBytes: number;
  /** Largest request a child is sent over stdio (the SDK's stdio reader stops at 10 MiB). */
  maxMessageBytes: number;
  /** Answer Streamable HTTP sessions with plain JSON instead of SSE (faster; no mid-call progress). */
  jsonResponses: boolean;
  mcpServers: Record<string, ServerConfig>;
  rateLimits: RateLimitsConfig;
  /** The default tool selection of every session; a session URL may narrow it. */
  selection?: SelectionSpec;
  configPath?: string;
  /** This replica's name (AGENTBOX_REPLICA): session ids begin with `<replica>.` so a router can find it. */
  replica?: string;
  /** How long a SIGTERM waits for calls in flight before ending the children (AGENTBOX_DRAIN_MS). */
  drainMs: number;
  /** What one child's output may cost the hub (AGENTBOX_CHILD_LOG_LINES_PER_SECOND, ..._LOG_LINE_BYTES, ..._NOTIFICATIONS_PER_SECOND). */
  childOutput: OutputLimits;
  /** Caps on sessions and on the events kept for resuming their streams (hub/config/session-limits.ts). */
  sessionLimits: SessionLimits;
  /** How often processes of a tenant's uid that belong to no server and no live session are killed. */
  sweepMs: number;
  /** Memory kept free for the hub and every tenant (AGENTBOX_MEMORY_RESERVE_MIB): below it, the largest processes of the tenant holding the most end (hub/tenants/memory-guard.ts). Undefined: a tenth of the memory, 256 MiB to 2 GiB. */
  memoryReserveMiB: number | "off" | undefined;
  /** How many tasks (tool calls run as tasks, hub/tasks/) one tenant may hold at once (AGENTBOX_TASKS_PER_TENANT). */
  tasksPerTenant: number;
  /** How long a task's result is kept after it ends, for tasks/get (AGENTBOX_TASK_TTL_SECONDS). */
  taskTtlSeconds: number;
  /** How many MiB of ended tasks' results one tenant's tasks keep at most; the oldest go first (AGENTBOX_TASK_RESULTS_MIB). */
  taskResultsMiB: number;
  /** The percentage of each server's slots (maxConcurrency) one tenant's tasks may hold at once; calls that are not tasks keep the rest (AGENTBOX_TASK_SLOTS_PERCENT). */
  taskSlotsPercent: number;
  /** Bytes one tenant's calls waiting for a slot of its servers may hold; past it a call that must wait is refused (AGENTBOX_QUEUED_CALL_BYTES). */
  queuedCallBytes: number;
  /** Previews of apps agents started (hub/config/previews.ts). */
  previews: PreviewConfig;
  /** What every session records (AGENTBOX_RECORD, hub/config/record.ts); passed to the servers. */
  record: RecordingKind[];
  /** The audit trail and the tenants /metrics names (hub/config/audit.ts). */
  audit: AuditConfig;
  /** Tenants apart on the network: their port blocks (hub/config/network.ts, hub/tenants/network.ts). */
  network: NetworkConfig;
}

export interface CliOverrides {
  host?: string;
  port?: number;
  config?: string;
  logLevel?: string;
}

/** dist/ of this build. */
export function distRoot(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
}

/**
 * The hub or a built-in server as `npm run build` bundles it (scripts/bundle.mjs): one file with
 * its dependencies, which starts in about half the CPU time of tsc's hundreds of modules.
 */
export function bundled(entry: "hub" | `servers/${string}`): string {
  return path.join(distRoot(), "bundle", ...entry.split("/"), "main.js");
}

/** The folder holding dist/ (the repository, or the image's install folder). */
export function installRoot(): string {
  return path.dirname(distRoot());
}

export function builtinServers(names: readonly string[] = BUILTIN_SERVERS): Record<string, ServerConfig> {
  const servers: Record<string, ServerConfig> = {};
  for (const name of names) {
    servers[name] = { command: process.execPath, args: [bundled(`servers/${name}`)] };
  }
  return servers;
}

/** A config file's servers, their relative paths resolved the way docs/configuration.md ("Relative paths") says. */
export function configuredServers(servers: Record<string, ServerConfig>, configPath: string): Record<string, ServerConfig> {
  return resolveServerPaths(servers, path.dirname(path.resolve(configPath)), installRoot(), configPath);
}

function readConfigFile(file: string): ConfigFile {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(`Cannot read config file ${file}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`Config file ${file} is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) throw new ConfigError(describeZodError(`Config file ${file}`, parsed.error));
  return parsed.data;
}

export function loadConfig(cli: CliOverrides = {}, env: NodeJS.ProcessEnv = process.env): HubConfig {
  const configPath = cli.config ?? env.AGENTBOX_CONFIG ?? defaultConfigPath();
  const file = configPath ? readConfigFile(configPath) : {};
  const port = cli.port ?? (env.AGENTBOX_PORT ? parsePort(env.AGENTBOX_PORT, "AGENTBOX_PORT") : undefined) ?? file.port ?? 8080;
  const mcpServers = file.mcpServers && configPath ? configuredServers(file.mcpServers, configPath) : builtinServers();
  const selection = selectionOf(file);
  const tenants = loadTenants(env, file);
  for (const [where, spec] of [["", selection], ...tenants.map((t) => [` tenants.${t.name}:`, selectionOf(t)] as const)] as const) {
    const bad = unknownDefaultServers(spec, Object.keys(mcpServers));
    if (bad) throw new ConfigError(`Config file ${configPath}:${where} ${bad}`);
  }
  const oauth = oauthFromEnv(env, file);
  const cors = env.AGENTBOX_CORS_ORIGINS
    ? env.AGENTBOX_CORS_ORIGINS.split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : (file.corsOrigins ?? []);
  return {
    host: cli.host ?? env.AGENTBOX_HOST ?? file.host ?? "127.0.0.1",
    port,
    workspace: path.resolve(env.AGENTBOX_WORKSPACE ?? file.workspace ?? defaultWorkspace()),
    tenants: oauth && !tenants.some((t) => t.apiKey) ? [] : tenants,
    oauth,
    limits: { ...file.limits, ...limitsFromEnv(env) },
    stateDir: env.AGENTBOX_STATE_DIR || file.stateDir || undefined,
    logLevel: parseLogLevel(cli.logLevel ?? env.AGENTBOX_LOG_LEVEL ?? file.logLevel),
    corsOrigins: cors,
    trustedProxies: checkedProxies(
      env.AGENTBOX_TRUSTED_PROXIES?.split(",")
        .map((s) => s.trim())
        .filter(Boolean) ??
        file.trustedProxies ??
        [],
    ),
    metricsKey: env.AGENTBOX_METRICS_KEY || file.metricsKey || undefined,
    allowedHosts:
      env.AGENTBOX_ALLOWED_HOSTS?.split(",")
        .map((s) => s.trim())
        .filter(Boolean) ??
      file.allowedHosts ??
      [],
    sessionIdleMs: positiveInt(env.AGENTBOX_SESSION_IDLE_MS, "AGENTBOX_SESSION_IDLE_MS") ?? file.sessionIdleMs ?? 30 * 60_000,
    contextTtlMs: contextTtl(env.AGENTBOX_CONTEXT_TTL_MS),
    // each is a process: a client churning through sessions must not fork one per session without bound
    sessionInstances: positiveInt(env.AGENTBOX_SESSION_INSTANCES, "AGENTBOX_SESSION_INSTANCES") ?? file.sessionInstances ?? 32,
    maxBodyBytes: positiveInt(env.AGENTBOX_MAX_BODY_BYTES, "AGENTBOX_MAX_BODY_BYTES") ?? file.maxBodyBytes ?? 16 * 1024 * 1024,
    maxMessageBytes: Math.min(
      positiveInt(env.AGENTBOX_MAX_MESSAGE_BYTES, "AGENTBOX_MAX_MESSAGE_BYTES") ?? file.maxMessageBytes ?? 8 * 1024 * 1024,
      // above this the children's reader drops the line and stops in the middle of the stream
      10 * 1024 * 1024 - 64 * 1024,
    ),
    jsonResponses: ["1", "true", "on", "yes"].includes((env.AGENTBOX_JSON_RESPONSES ?? "").toLowerCase()) || (file.jsonResponses ?? false),
    mcpServers,
    rateLimits: env.AGENTBOX_RATE_LIMITS !== undefined ? parseRateLimitsEnv(env.AGENTBOX_RATE_LIMITS) : (file.rateLimits ?? DEFAULT_RATE_LIMITS),
    selection,
    configPath,
    replica: parseReplica(env.AGENTBOX_REPLICA),
    // below Kubernetes' default 30 s grace period, so the children still get a clean stop
    drainMs: positiveInt(env.AGENTBOX_DRAIN_MS, "AGENTBOX_DRAIN_MS") ?? 25_000,
    // each task holds a call, perhaps a child's process: a client starting task after task must meet a bound
    tasksPerTenant: positiveInt(env.AGENTBOX_TASKS_PER_TENANT, "AGENTBOX_TASKS_PER_TENANT") ?? 64,
    taskTtlSeconds: positiveInt(env.AGENTBOX_TASK_TTL_SECONDS, "AGENTBOX_TASK_TTL_SECONDS") ?? 3600,
    taskResultsMiB: positiveInt(env.AGENTBOX_TASK_RESULTS_MIB, "AGENTBOX_TASK_RESULTS_MIB") ?? 32,
    // tasks are work nobody waits on: a tenant starting many must leave the calls its clients wait on room to run
    taskSlotsPercent: percent(env.AGENTBOX_TASK_SLOTS_PERCENT, "AGENTBOX_TASK_SLOTS_PERCENT") ?? file.taskSlotsPercent ?? 50,
    // eight calls of the largest size a server takes (AGENTBOX_MAX_MESSAGE_BYTES, 8 MiB) may wait at once
    queuedCallBytes: positiveInt(env.AGENTBOX_QUEUED_CALL_BYTES, "AGENTBOX_QUEUED_CALL_BYTES") ?? file.queuedCallBytes ?? 64 * 1024 * 1024,
    // a child's output is untrusted: what it may cost the hub's log and clients per second
    childOutput: {
      linesPerSecond: positiveInt(env.AGENTBOX_CHILD_LOG_LINES_PER_SECOND, "AGENTBOX_CHILD_LOG_LINES_PER_SECOND") ?? 200,
      maxLineBytes: positiveInt(env.AGENTBOX_CHILD_LOG_LINE_BYTES, "AGENTBOX_CHILD_LOG_LINE_BYTES") ?? 8192,
      notificationsPerSecond: positiveInt(env.AGENTBOX_CHILD_NOTIFICATIONS_PER_SECOND, "AGENTBOX_CHILD_NOTIFICATIONS_PER_SECOND") ?? 200,
    },
    sessionLimits: sessionLimitsFromEnv(env),
    audit: auditConfigFromEnv(env),
    sweepMs: positiveInt(env.AGENTBOX_SWEEP_MS, "AGENTBOX_SWEEP_MS") ?? 5_000,
    memoryReserveMiB: env.AGENTBOX_MEMORY_RESERVE_MIB === "off" ? "off" : positiveInt(env.AGENTBOX_MEMORY_RESERVE_MIB, "AGENTBOX_MEMORY_RESERVE_MIB (or off)"),
    previews: previewsFromEnv(env),
    record: recordFrom(env.AGENTBOX_RECORD, file.record),
    network: networkFromEnv(env, file),
  };
}

/**
 * ./workspace where the hub may create it; else (a desktop client starts the hub in "/", as a user
 * who cannot write there) a folder in the user's home.
 */
function defaultWorkspace(): string {
  const here = path.resolve("workspace");
  try {
    if (fs.existsSync(here)) return here;
    fs.accessSync(process.cwd(), fs.constants.W_OK);
    return here;
  } catch {
    return path.join(os.homedir(), "agentbox-workspace");
  }
}

// The image mounts a config here; from source there is none unless given.
function defaultConfigPath(): string | undefined {
  const imagePath = "/etc/agentbox/agentbox.json";
  return fs.existsSync(imagePath) ? imagePath : undefined;
}

/** The longest delay a timer holds (~24.8 days): a context's expiry is one. */
const MAX_CONTEXT_TTL_MS = 2 ** 31 - 1;

/** A context's longest life (hub/sessions/contexts.ts): a day unless AGENTBOX_CONTEXT_TTL_MS says otherwise. */
function contextTtl(value: string | undefined): number {
  const ms = positiveInt(value, "AGENTBOX_CONTEXT_TTL_MS") ?? 24 * 3_600_000;
  if (ms > MAX_CONTEXT_TTL_MS) throw new ConfigError(`AGENTBOX_CONTEXT_TTL_MS may be at most ${MAX_CONTEXT_TTL_MS} (~24 days), got ${ms}`);
  return ms;
}
