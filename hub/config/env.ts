// Settings read from the environment (AGENTBOX_*): each parsed here, with a message that names
// the variable and what it takes; and the tenants, from the environment or the config file.
import { isIP } from "node:net";
import {
  ConfigError,
  describeZodError,
  fileSchema,
  rateLimitsSchema,
  type ConfigFile,
  type RateLimitsConfig,
  type TenantConfig,
  type TenantLimits,
} from "./schema.js";

export function parseRateLimitsEnv(value: string): RateLimitsConfig {
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

export function parsePort(value: string, where: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`${where} must be a port number (0-65535), got "${value}"`);
  return port;
}

export function positiveInt(value: string | undefined, where: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new ConfigError(`${where} must be a positive whole number, got "${value}"`);
  return n;
}

/** A whole percentage, 1 to 100. */
export function percent(value: string | undefined, where: string): number | undefined {
  const n = positiveInt(value, where);
  if (n !== undefined && n > 100) throw new ConfigError(`${where} is a percentage, 1 to 100, got "${value}"`);
  return n;
}

// A DNS label (a Kubernetes pod name is one): it becomes a host name in the router's upstream.
const REPLICA_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export function parseReplica(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (!REPLICA_NAME.test(value)) {
    throw new ConfigError(
      `AGENTBOX_REPLICA must be a DNS label (lower-case letters, digits and '-', 1-63 characters, starting and ending with a letter or digit, like ` +
        `"agentbox-0"), got "${value}"`,
    );
  }
  return value;
}

/**
 * AGENTBOX_TENANTS ("alice:KEY,bob:KEY" or a JSON object shaped like the file's "tenants") and the
 * file's "tenants" name several tenants; AGENTBOX_API_KEY (or the file's apiKey) one; none, a
 * keyless one.
 */
export function loadTenants(env: NodeJS.ProcessEnv, file: ConfigFile): TenantConfig[] {
  const single = env.AGENTBOX_API_KEY || file.apiKey || undefined;
  const many = env.AGENTBOX_TENANTS ? parseTenantsEnv(env.AGENTBOX_TENANTS) : file.tenants;
  if (many && Object.keys(many).length > 0) {
    if (single)
      throw new ConfigError(
        'Give either tenants (AGENTBOX_TENANTS or "tenants" in the config file) or one API key (AGENTBOX_API_KEY / "apiKey"), not both: the single key ' +
          "is shorthand for one tenant.",
      );
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

function parseTenantsEnv(value: string): NonNullable<ConfigFile["tenants"]> {
  let raw: unknown;
  if (value.trim().startsWith("{")) {
    try {
      raw = JSON.parse(value);
    } catch {
      throw new ConfigError('AGENTBOX_TENANTS is not valid JSON; give "name:key,name:key" or {"name":{"apiKey":"…"}}.');
    }
  } else {
    const entries: Record<string, { apiKey: string }> = {};
    for (const pair of value
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)) {
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

export function limitsFromEnv(env: NodeJS.ProcessEnv): TenantLimits {
  const limits: TenantLimits = {};
  const processes = positiveInt(env.AGENTBOX_TENANT_MAX_PROCESSES, "AGENTBOX_TENANT_MAX_PROCESSES");
  const memory = positiveInt(env.AGENTBOX_PROCESS_MEMORY_MIB, "AGENTBOX_PROCESS_MEMORY_MIB");
  if (processes !== undefined) limits.processes = processes;
  if (memory !== undefined) limits.memoryMiB = memory;
  const disk = positiveInt(env.AGENTBOX_DISK_MIB, "AGENTBOX_DISK_MIB");
  if (disk !== undefined) limits.diskMiB = disk;
  const sharedMemory = positiveInt(env.AGENTBOX_SHARED_MEMORY_MIB, "AGENTBOX_SHARED_MEMORY_MIB");
  if (sharedMemory !== undefined) limits.sharedMemoryMiB = sharedMemory;
  return limits;
}

export function checkedProxies(entries: string[]): string[] {
  for (const entry of entries) {
    const [address, prefix, extra] = entry.split("/");
    const bits = isIP(address) === 6 ? 128 : 32;
    const badPrefix = prefix !== undefined && !(/^\d+$/.test(prefix) && Number(prefix) <= bits);
    if (!isIP(address) || badPrefix || extra !== undefined)
      throw new ConfigError(`AGENTBOX_TRUSTED_PROXIES: '${entry}' is not an IP address or CIDR range (like 10.0.0.0/8).`);
  }
  return entries;
}
