// How tenants are kept apart on the network (hub/tenants/network.ts): on or off, the span of ports
// their blocks are cut from, and each block's size. From the config file's "network" and a
// tenant's "ports", overridden by AGENTBOX_NETWORK_ISOLATION, AGENTBOX_TENANT_PORTS and
// AGENTBOX_PORTS_PER_TENANT.
import { ConfigError, type ConfigFile } from "./schema.js";
import { positiveInt } from "./env.js";

export interface PortRange {
  low: number;
  high: number;
}

export interface NetworkConfig {
  /** "auto": tenants' ports apart wherever the kernel allows it (several tenants only); "off": shared. */
  isolation: "auto" | "off";
  /** The ports tenants' blocks are cut from; by default those above the kernel's ephemeral range. */
  ports?: PortRange;
  /** Ports in each tenant's block. */
  portsPerTenant: number;
}

export const DEFAULT_PORTS_PER_TENANT = 100;

export const formatRange = (r: PortRange) => `${r.low}-${r.high}`;

/** "61000-65535" (or one port, "8080") as a range, with a message naming `where` when it is not one. */
export function parsePortRange(text: string, where: string): PortRange {
  const match = /^\s*(\d{1,5})\s*(?:-\s*(\d{1,5})\s*)?$/.exec(text);
  const low = Number(match?.[1]);
  const high = match?.[2] === undefined ? low : Number(match[2]);
  if (!match || low < 1 || high > 65535 || high < low) {
    throw new ConfigError(`${where} must be a port range such as "61000-65535" (ports 1 to 65535, the lower one first), got "${text}"`);
  }
  return { low, high };
}

export function networkFromEnv(env: NodeJS.ProcessEnv, file: ConfigFile): NetworkConfig {
  const isolation = (env.AGENTBOX_NETWORK_ISOLATION ?? file.network?.isolation ?? "auto").trim().toLowerCase();
  if (isolation !== "auto" && isolation !== "off") {
    throw new ConfigError(`AGENTBOX_NETWORK_ISOLATION must be "auto" (tenants' ports kept apart where the kernel allows) or "off", got "${isolation}"`);
  }
  const ports = env.AGENTBOX_TENANT_PORTS || file.network?.ports;
  return {
    isolation,
    ports: ports ? parsePortRange(ports, env.AGENTBOX_TENANT_PORTS ? "AGENTBOX_TENANT_PORTS" : "network.ports") : undefined,
    portsPerTenant: positiveInt(env.AGENTBOX_PORTS_PER_TENANT, "AGENTBOX_PORTS_PER_TENANT") ?? file.network?.portsPerTenant ?? DEFAULT_PORTS_PER_TENANT,
  };
}
