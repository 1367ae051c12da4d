// Settings come from defaults, then the config file (--config / AGENTBOX_CONFIG), then the
// environment, then command-line flags. Every key is optional.
import fs from "node:fs";
import { isIP } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { BUILTIN_SERVERS, BUILTIN_TOOL_RATES } from "../servers/builtin.js";
import { parseLogLevel, type LogLevel } from "../servers/lib/log.js";
import { selectionConfigShape, selectionOf, unknownDefaultServers, type SelectionSpec } from "./selection-spec.js";

export { BUILTIN_SERVERS };

const toolFilter = z.object({ allow: z.array(z.string()).optional(), deny: z.array(z.string()).optional() }).strict();

export const serverConfigSchema = z
  .object({
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
    url: z.string().url().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    prefix: z.string().regex(/^[a-zA-Z0-9_-]*$/, "prefix may use letters, digits, _ and - only").optional(),
    enabled: z.boolean().optional(),
    start: z.enum(["eager", "lazy"]).optional(),
    timeoutMs: z.number().int().positive().optional(),
    maxTotalTimeoutMs: z.number().int().positive().optional(),
    maxConcurrency: z.number().int().positive().optional(),
    maxQueue: z.number().int().nonnegative().optional(),
    tools: toolFilter.optional(),
  })
  .strict()
  .refine((s) => Boolean(s.command) !== Boolean(s.url), { message: "give either command (stdio) or url (HTTP), not both" });

export type ServerConfig = z.infer<typeof serverConfigSchema>;

const rateSpec = z.string().regex(/^\d+\s*\/\s*(s|sec|second|m|min|minute|h|hour)$/, 'a rate like "100/min", "5/s" or "1000/hour"');
export const rateLimitsSchema = z.union([
  z.literal(false),
  z
    .object({
      methods: z.record(z.string(), rateSpec).optional(),
      tools: z.record(z.string(), rateSpec).optional(),
    })
    .strict(),
]);
export type RateLimitsConfig = z.infer<typeof rateLimitsSchema>;

const tenantLimitsSchema = z
  .object({
    processes: z.number().int().min(16).optional(),
    memoryMiB: z.number().int().min(64).optional(),
  })
  .strict();
export type TenantLimits = z.infer<typeof tenantLimitsSchema>;

export const TENANT_NAME = /^[a-z][a-z0-9-]{0,31}$/;
const tenantSchema = z
  .object({
    apiKey: z.string().min(1, "an API key may not be empty"),
    uid: z.number().int().min(1000).max(2 ** 31 - 2).optional(),
    limits: tenantLimitsSchema.optional(),
    // what this tenant's sessions see by default (hub/selection-spec.ts); its keys replace the global ones
    ...selectionConfigShape,
  })
  .strict();
export type TenantConfig = z.infer<typeof tenantSchema> & { name: string };

export const DEFAULT_RATE_LIMITS: RateLimitsConfig = {
  methods: { "tools/list": "10/min" },
  tools: { "*": "100/min", ...BUILTIN_TOOL_RATES },
};

const fileSchema = z
  .object({
    host: z.string().optional(),
    port: z.number().int().min(0).max(65535).optional(),
    workspace: z.string().optional(),
    apiKey: z.string().optional(),
    logLevel: z.string().optional(),
    corsOrigins: z.array(z.string()).optional(),
    allowedHosts: z.array(z.string()).optional(),
    trustedProxies: z.array(z.string()).optional(),
    sessionIdleMs: z.number().int().positive().optional(),
    maxBodyBytes: z.number().int().positive().optional(),
    maxMessageBytes: z.number().int().positive().optional(),
    jsonResponses: z.boolean().optional(),
    mcpServers: z.record(z.string(), serverConfigSchema).optional(),
    rateLimits: rateLimitsSchema.optional(),
    tenants: z.record(z.string().regex(TENANT_NAME, "a tenant name uses a-z, 0-9 and - (at most 32, starting with a letter)"), tenantSchema).optional(),
    limits: tenantLimitsSchema.optional(),
    stateDir: z.string().optional(),
    // selection hook: default servers/tools/catalog for every session (hub/selection-spec.ts)
    ...selectionConfigShape,
  })
  .strict();

export interface HubConfig {
  host: string;
  port: number;
  workspace: string;
  /**
   * Who may use the hub: one entry per API key (an isolation unit), or a single keyless tenant.
   * AGENTBOX_API_KEY is the one-tenant shorthand.
   */
  tenants: TenantConfig[];
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
  sessionIdleMs: number;
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
}

export interface CliOverrides {
  host?: string;
  port?: number;
  config?: string;
  logLevel?: string;
}

/** dist/ of this build: built-in servers run as `node dist/servers/<name>/main.js`. */
export function distRoot(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
}

export function builtinServers(names: readonly string[] = BUILTIN_SERVERS): Record<string, ServerConfig> {
  const servers: Record<string, ServerConfig> = {};
  for (const name of names) {
    servers[name] = { command: process.execPath, args: [path.join(distRoot(), "servers", name, "main.js")] };
  }
  return servers;
}

export class ConfigError extends Error {}

function describeZodError(where: string, error: z.ZodError): string {
  const lines = error.issues.map((i) => `  ${i.path.join(".") || "(root)"}: ${i.message}`);
  return `${where} is not valid:\n${lines.join("\n")}`;
}

function readConfigFile(file: string): z.infer<typeof fileSchema> {
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

function parseRateLimitsEnv(value: string): RateLimitsConfig {
  if (["off", "false", "0", "none"].includes(value.trim().toLowerCase())) return false;
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    throw new ConfigError(`AGENTBOX_RATE_LIMITS must be "off" or a JSON object like {"tools":{"*":"100/min"}}`);
  }
  const parsed = rateLimitsSchema.safeParse(json);
  if (!parsed.success) throw new ConfigError(describeZodError("AGENTBOX_RATE_LIMITS", parsed.error));
  return parsed.data;
}

function parsePort(value: string, where: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`${where} must be a port number (0-65535), got "${value}"`);
  return port;
}

function positiveInt(value: string | undefined, where: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new ConfigError(`${where} must be a positive whole number, got "${value}"`);
  return n;
}

// A DNS label (a Kubernetes pod name is one): it becomes a host name in the router's upstream.
const REPLICA_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

function parseReplica(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (!REPLICA_NAME.test(value)) {
    throw new ConfigError(`AGENTBOX_REPLICA must be a DNS label (lower-case letters, digits and '-', 1-63 characters, starting and ending with a letter or digit, like "agentbox-0"), got "${value}"`);
  }
  return value;
}

export function loadConfig(cli: CliOverrides = {}, env: NodeJS.ProcessEnv = process.env): HubConfig {
  const configPath = cli.config ?? env.AGENTBOX_CONFIG ?? defaultConfigPath();
  const file = configPath ? readConfigFile(configPath) : {};
  const port = cli.port ?? (env.AGENTBOX_PORT ? parsePort(env.AGENTBOX_PORT, "AGENTBOX_PORT") : undefined) ?? file.port ?? 8080;
  const mcpServers = file.mcpServers ?? builtinServers();
  const selection = selectionOf(file);
  const tenants = loadTenants(env, file);
  for (const [where, spec] of [["", selection], ...tenants.map((t) => [` tenants.${t.name}:`, selectionOf(t)] as const)] as const) {
    const bad = unknownDefaultServers(spec, Object.keys(mcpServers));
    if (bad) throw new ConfigError(`Config file ${configPath}:${where} ${bad}`);
  }
  const cors = env.AGENTBOX_CORS_ORIGINS
    ? env.AGENTBOX_CORS_ORIGINS.split(",").map((s) => s.trim()).filter(Boolean)
    : (file.corsOrigins ?? []);
  return {
    host: cli.host ?? env.AGENTBOX_HOST ?? file.host ?? "127.0.0.1",
    port,
    workspace: path.resolve(env.AGENTBOX_WORKSPACE ?? file.workspace ?? defaultWorkspace()),
    tenants,
    limits: { ...file.limits, ...limitsFromEnv(env) },
    stateDir: env.AGENTBOX_STATE_DIR || file.stateDir || undefined,
    logLevel: parseLogLevel(cli.logLevel ?? env.AGENTBOX_LOG_LEVEL ?? file.logLevel),
    corsOrigins: cors,
    trustedProxies: checkedProxies(env.AGENTBOX_TRUSTED_PROXIES?.split(",").map((s) => s.trim()).filter(Boolean) ?? file.trustedProxies ?? []),
    allowedHosts: env.AGENTBOX_ALLOWED_HOSTS?.split(",").map((s) => s.trim()).filter(Boolean) ?? file.allowedHosts ?? [],
    sessionIdleMs: positiveInt(env.AGENTBOX_SESSION_IDLE_MS, "AGENTBOX_SESSION_IDLE_MS") ?? file.sessionIdleMs ?? 30 * 60_000,
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
  };
}

/**
 * AGENTBOX_TENANTS ("alice:KEY,bob:KEY" or a JSON object shaped like the file's "tenants") and the
 * file's "tenants" name several tenants; AGENTBOX_API_KEY (or the file's apiKey) one; none, a
 * keyless one.
 */
function loadTenants(env: NodeJS.ProcessEnv, file: z.infer<typeof fileSchema>): TenantConfig[] {
  const single = env.AGENTBOX_API_KEY || file.apiKey || undefined;
  const many = env.AGENTBOX_TENANTS ? parseTenantsEnv(env.AGENTBOX_TENANTS) : file.tenants;
  if (many && Object.keys(many).length > 0) {
    if (single) throw new ConfigError("Give either tenants (AGENTBOX_TENANTS or \"tenants\" in the config file) or one API key (AGENTBOX_API_KEY / \"apiKey\"), not both: the single key is shorthand for one tenant.");
    const tenants = Object.entries(many).map(([name, t]) => ({ ...t, name }));
    const keys = new Set<string>();
    for (const t of tenants) {
      if (keys.has(t.apiKey)) throw new ConfigError(`Tenant '${t.name}' has the same API key as another tenant; every tenant needs its own key.`);
      keys.add(t.apiKey);
    }
    return tenants;
  }
  const uid = env.AGENTBOX_TENANT_UID ? positiveInt(env.AGENTBOX_TENANT_UID, "AGENTBOX_TENANT_UID") : undefined;
  return [{ name: "default", ...(single ? { apiKey: single } : {}), ...(uid ? { uid } : {}) } as TenantConfig];
}

function parseTenantsEnv(value: string): Record<string, z.infer<typeof tenantSchema>> {
  let raw: unknown;
  if (value.trim().startsWith("{")) {
    try {
      raw = JSON.parse(value);
    } catch {
      throw new ConfigError('AGENTBOX_TENANTS is not valid JSON; give "name:key,name:key" or {"name":{"apiKey":"…"}}.');
    }
  } else {
    const entries: Record<string, { apiKey: string }> = {};
    for (const pair of value.split(",").map((s) => s.trim()).filter(Boolean)) {
      const colon = pair.indexOf(":");
      if (colon <= 0) throw new ConfigError(`AGENTBOX_TENANTS entry '${pair.slice(0, 40)}' is not name:key.`);
      entries[pair.slice(0, colon)] = { apiKey: pair.slice(colon + 1) };
    }
    raw = entries;
  }
  const parsed = fileSchema.shape.tenants.safeParse(raw);
  if (!parsed.success) throw new ConfigError(describeZodError("AGENTBOX_TENANTS", parsed.error));
  return parsed.data ?? {};
}

function limitsFromEnv(env: NodeJS.ProcessEnv): TenantLimits {
  const limits: TenantLimits = {};
  const processes = positiveInt(env.AGENTBOX_TENANT_MAX_PROCESSES, "AGENTBOX_TENANT_MAX_PROCESSES");
  const memory = positiveInt(env.AGENTBOX_PROCESS_MEMORY_MIB, "AGENTBOX_PROCESS_MEMORY_MIB");
  if (processes !== undefined) limits.processes = processes;
  if (memory !== undefined) limits.memoryMiB = memory;
  return limits;
}

function checkedProxies(entries: string[]): string[] {
  for (const entry of entries) {
    const [address, prefix, extra] = entry.split("/");
    const bits = isIP(address) === 6 ? 128 : 32;
    const badPrefix = prefix !== undefined && !(/^\d+$/.test(prefix) && Number(prefix) <= bits);
    if (!isIP(address) || badPrefix || extra !== undefined) throw new ConfigError(`AGENTBOX_TRUSTED_PROXIES: '${entry}' is not an IP address or CIDR range (like 10.0.0.0/8).`);
  }
  return entries;
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
